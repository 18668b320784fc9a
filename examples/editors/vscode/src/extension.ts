// palace for VS Code: runs `palace lsp` and shows what it says — hover,
// the code lens above the first line, inlay hints and diagnostics come
// through the language client; the commands below add the context pack,
// the brief and "record the selection as evidence".
import * as vscode from 'vscode';
import {
  ExecuteCommandSignature,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';

let client: LanguageClient | undefined;

interface Pack {
  rendered?: string;
}

/** settings are what palace lsp reads from initializationOptions and
 * workspace/didChangeConfiguration. The home is not among them: the server
 * takes it from its command line only (see userHome). */
function settings(): object {
  const c = vscode.workspace.getConfiguration('palace');
  return {
    budget: c.get<number>('budget') || undefined,
    hints: {
      hover: c.get<boolean>('hints.hover', true),
      codeLens: c.get<boolean>('hints.codeLens', true),
      inlayHints: c.get<boolean>('hints.inlayHints', true),
      diagnostics: c.get<boolean>('hints.diagnostics', true),
    },
  };
}

/** userHome is palace.home as the user set it (user or remote machine
 * settings), never a workspace's: a cloned repository can ship
 * .vscode/settings.json naming a palace it also ships. palace.home is a
 * machine setting, so VS Code itself ignores a workspace value; reading
 * globalValue keeps that true whatever the editor does. */
function userHome(): string | undefined {
  const home = vscode.workspace.getConfiguration('palace').inspect<string>('home');
  if (home && (home.workspaceValue || home.workspaceFolderValue) && !workspaceHomeWarned) {
    workspaceHomeWarned = true;
    void vscode.window.showWarningMessage(
      'palace: palace.home in this workspace\'s settings is ignored: a workspace must not choose your palace. Set palace.home in your user settings, or PALACE_HOME.',
    );
  }
  return home?.globalValue || undefined;
}

let workspaceHomeWarned = false;

function newClient(): LanguageClient {
  const c = vscode.workspace.getConfiguration('palace');
  const args = ['lsp', '--mode', c.get<string>('mode', 'human')];
  const home = userHome();
  if (home) {
    args.push('--home', home);
  }
  // TransportKind.stdio makes the client add --stdio, which palace accepts.
  const server: ServerOptions = {
    command: c.get<string>('path', 'palace'),
    args,
    transport: TransportKind.stdio,
  };
  const options: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    // Only the settings the server reads: palace.path, palace.mode and
    // palace.home choose the process (a change restarts it), so they are
    // not sent.
    initializationOptions: settings(),
    outputChannelName: 'palace',
    middleware: {
      // The code lens runs palace.context; show the pack it returns.
      executeCommand: async (command: string, args: unknown[], next: ExecuteCommandSignature) => {
        const result = await next(command, args);
        if (command === 'palace.context' || command === 'palace.brief') {
          await showMarkdown((result as Pack | undefined)?.rendered ?? JSON.stringify(result, null, 2));
        }
        if (command === 'palace.openCard') {
          await openExternal(result);
        }
        return result;
      },
    },
  };
  return new LanguageClient('palace', 'palace', server, options);
}

async function showMarkdown(text: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: text });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

/** palaceRequest sends palace/context or palace/brief for the active file. */
async function palaceRequest(method: 'palace/context' | 'palace/brief'): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor) {
    void vscode.window.showWarningMessage('palace: open a file first');
    return;
  }
  const query = await vscode.window.showInputBox({ prompt: 'Query (optional)', placeHolder: 'e.g. sqlite lock timeout' });
  try {
    const pack = await client.sendRequest<Pack>(method, {
      uri: editor.document.uri.toString(),
      query: query || undefined,
    });
    await showMarkdown(pack.rendered ?? JSON.stringify(pack, null, 2));
  } catch (err) {
    void vscode.window.showErrorMessage(`palace: ${(err as Error).message}`);
  }
}

async function recordSelection(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!client || !editor) {
    return;
  }
  const field = await vscode.window.showInputBox({ prompt: 'Field (optional)', placeHolder: 'general' });
  const sel = editor.selection;
  try {
    const ev = await client.sendRequest<{ id: string }>('workspace/executeCommand', {
      command: 'palace.record',
      arguments: [
        {
          uri: editor.document.uri.toString(),
          range: sel.isEmpty ? undefined : client.code2ProtocolConverter.asRange(sel),
          field: field || undefined,
        },
      ],
    });
    void vscode.window.showInformationMessage(`palace: recorded ${ev.id}`);
  } catch (err) {
    void vscode.window.showErrorMessage(`palace: ${(err as Error).message}`);
  }
}

async function openExternal(result: unknown): Promise<void> {
  const url = (result as { url?: string } | undefined)?.url;
  if (url) {
    await vscode.env.openExternal(vscode.Uri.parse(url));
  }
}

/** openCardInBrowser asks palace lsp for the card page on the running
 * `palace ui` (palace.openCard) and opens it: the card id under the cursor,
 * else the one typed. */
async function openCardInBrowser(): Promise<void> {
  if (!client) {
    return;
  }
  const editor = vscode.window.activeTextEditor;
  let id = '';
  if (editor) {
    const range = editor.document.getWordRangeAtPosition(editor.selection.active, /kc_[0-9a-z]+/);
    id = range ? editor.document.getText(range) : '';
  }
  if (!id) {
    id = (await vscode.window.showInputBox({ prompt: 'Card id', placeHolder: 'kc_…' })) ?? '';
  }
  if (!id) {
    return;
  }
  try {
    const res = await client.sendRequest('workspace/executeCommand', {
      command: 'palace.openCard',
      arguments: [{ uri: editor?.document.uri.toString(), id }],
    });
    await openExternal(res);
  } catch (err) {
    void vscode.window.showErrorMessage(`palace: ${(err as Error).message}`);
  }
}

async function start(): Promise<void> {
  client = newClient();
  await client.start();
}

async function restart(): Promise<void> {
  if (client) {
    await client.stop();
  }
  await start();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand('palace.showContext', () => palaceRequest('palace/context')),
    vscode.commands.registerCommand('palace.showBrief', () => palaceRequest('palace/brief')),
    vscode.commands.registerCommand('palace.recordSelection', recordSelection),
    vscode.commands.registerCommand('palace.restart', restart),
    vscode.commands.registerCommand('palace.openCardInBrowser', openCardInBrowser),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // The binary, the mode and the home are fixed per process: restart
      // for them. Everything else reaches the server as
      // didChangeConfiguration.
      if (e.affectsConfiguration('palace.path') || e.affectsConfiguration('palace.mode') || e.affectsConfiguration('palace.home')) {
        void restart();
      } else if (e.affectsConfiguration('palace') && client) {
        void client.sendNotification('workspace/didChangeConfiguration', { settings: { palace: settings() } });
      }
    }),
  );
  try {
    await start();
  } catch (err) {
    client = undefined;
    // Said once per session, with what to do: the extension activates only
    // in workspaces with .palace/ or on a palace command.
    if (!installHintShown) {
      installHintShown = true;
      void vscode.window.showErrorMessage(
        `palace: could not start \`palace lsp\` (${(err as Error).message}). Install palace (go install github.com/palacehq/palace/cmd/palace@latest) or set palace.path to the binary.`,
      );
    }
  }
}

let installHintShown = false;

export async function deactivate(): Promise<void> {
  if (client) {
    await client.stop();
  }
}
