-- palace for Neovim: starts `palace lsp` for every buffer inside a git
-- checkout (or a folder with .palace/) and shows what it says.
--
-- Works with the built-in client of Neovim 0.7 and later:
--   * hover (K), diagnostics and code lenses come from vim.lsp as usual;
--   * inlay hints use vim.lsp.inlay_hint on 0.10+, and on older versions are
--     drawn here as end-of-line virtual text from textDocument/inlayHint;
--   * :PalaceContext shows the context pack for the current file,
--     :PalaceBrief the brief; the code lens runs the same command.
--
--   require('palace').setup({
--     cmd = { 'palace', 'lsp' },           -- add '--mode', 'agent' to browse as an agent
--     home = nil,                          -- palace home, passed as --home; default $PALACE_HOME or ~/.palace
--     budget = nil,                        -- context pack budget in characters
--     hints = { hover = true, codeLens = true, inlayHints = true, diagnostics = true },
--     root_markers = { '.palace', '.git' },
--   })
local M = {}

M.ns = vim.api.nvim_create_namespace('palace-inlay-hints')

local defaults = {
  cmd = { 'palace', 'lsp' },
  home = nil,
  budget = nil,
  hints = { hover = true, codeLens = true, inlayHints = true, diagnostics = true },
  root_markers = { '.palace', '.git' },
  log_level = vim.log.levels.WARN,
}

local config = vim.deepcopy(defaults)
local clients = {} -- root → client id

-- settings are what the server reads from its settings. The home is not
-- one of them: palace lsp takes it only from its command line or
-- PALACE_HOME, so a project's settings cannot choose it (see command).
local function settings()
  return { budget = config.budget, hints = config.hints }
end

-- command is config.cmd with the home from setup() passed as --home.
local function command()
  local cmd = vim.deepcopy(config.cmd)
  if config.home ~= nil and config.home ~= '' then
    table.insert(cmd, '--home')
    table.insert(cmd, vim.fn.expand(config.home))
  end
  return cmd
end

-- root_of finds the nearest folder holding one of the root markers.
local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  for _, marker in ipairs(config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found == '' then
      found = vim.fn.findfile(marker, dir .. ';')
    end
    if found ~= '' then
      return vim.fn.fnamemodify(found, ':p:h:h'):gsub('/$', '')
    end
  end
  return dir
end

local function native_inlay_hints()
  return vim.lsp.inlay_hint ~= nil and type(vim.lsp.inlay_hint.enable) == 'function'
end

-- Inlay hints for Neovim < 0.10: ask for the buffer's hints and draw each
-- label as virtual text at the end of its line.
function M.refresh_inlay_hints(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not config.hints.inlayHints or native_inlay_hints() or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local last = vim.api.nvim_buf_line_count(bufnr)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = last, character = 0 } },
  }
  vim.lsp.buf_request(bufnr, 'textDocument/inlayHint', params, function(err, result, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if err or not client or client.name ~= 'palace' or not vim.api.nvim_buf_is_loaded(bufnr) then
      return
    end
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    for _, hint in ipairs(result or {}) do
      local label = hint.label
      if type(label) == 'table' then
        local parts = {}
        for _, p in ipairs(label) do
          table.insert(parts, p.value)
        end
        label = table.concat(parts)
      end
      pcall(vim.api.nvim_buf_set_extmark, bufnr, M.ns, hint.position.line, 0, {
        virt_text = { { ' ' .. label, 'Comment' } },
        virt_text_pos = 'eol',
        hl_mode = 'combine',
      })
    end
  end)
end

-- show opens a scratch buffer with Markdown text.
local function show(title, text)
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  pcall(vim.api.nvim_buf_set_name, buf, title)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].modifiable = false
end

-- request sends one of palace's own requests about the current buffer.
local function request(method, extra, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local params = vim.tbl_extend('force', { uri = vim.uri_from_bufnr(bufnr) }, extra or {})
  vim.lsp.buf_request(bufnr, method, params, function(err, result, ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    if not client or client.name ~= 'palace' then
      return
    end
    if err then
      vim.notify('palace: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    on_result(result)
  end)
end

function M.context(extra)
  request('palace/context', extra, function(pack)
    show('palace://context', pack.rendered or vim.inspect(pack))
  end)
end

function M.brief(extra)
  request('palace/brief', extra, function(brief)
    show('palace://brief', brief.rendered or vim.inspect(brief))
  end)
end

local function on_attach(client, bufnr)
  if config.hints.codeLens then
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
      buffer = bufnr,
      callback = function()
        pcall(vim.lsp.codelens.refresh)
      end,
    })
    pcall(vim.lsp.codelens.refresh)
  end
  if config.hints.inlayHints then
    if native_inlay_hints() then
      pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr })
    else
      vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost' }, {
        buffer = bufnr,
        callback = function()
          M.refresh_inlay_hints(bufnr)
        end,
      })
      M.refresh_inlay_hints(bufnr)
    end
  end
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.codeLens = { refreshSupport = true }
  caps.workspace.inlayHint = { refreshSupport = true }
  return caps
end

local handlers = {
  ['workspace/codeLens/refresh'] = function()
    pcall(vim.lsp.codelens.refresh)
    return vim.NIL
  end,
  ['workspace/inlayHint/refresh'] = function()
    for _, buf in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(buf) then
        M.refresh_inlay_hints(buf)
      end
    end
    return vim.NIL
  end,
}

-- attach starts (or reuses) the client of the buffer's root and attaches.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    return
  end
  local root = root_of(name)
  local id = clients[root]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client({
      name = 'palace',
      cmd = command(),
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      init_options = settings(),
      settings = { palace = settings() },
      capabilities = capabilities(),
      handlers = handlers,
      on_attach = on_attach,
    })
    if id == nil then
      vim.notify('palace: could not start ' .. table.concat(config.cmd, ' '), config.log_level)
      return
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

function M.setup(opts)
  config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  local group = vim.api.nvim_create_augroup('palace', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile' }, {
    group = group,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command('PalaceContext', function(o)
    M.context(o.args ~= '' and { query = o.args } or nil)
  end, { nargs = '?', desc = 'Show the palace context pack for this file' })
  vim.api.nvim_create_user_command('PalaceBrief', function(o)
    M.brief(o.args ~= '' and { query = o.args } or nil)
  end, { nargs = '?', desc = 'Show the palace brief for this file' })
  vim.api.nvim_create_user_command('PalaceHints', function()
    M.refresh_inlay_hints(0)
  end, { desc = 'Redraw palace inlay hints' })
  -- The code lens runs palace.context: show the pack instead of dropping it.
  vim.lsp.commands['palace.context'] = function(command)
    local arg = (command.arguments or {})[1] or {}
    M.context(arg.uri and {} or nil)
  end
  -- Buffers already open when setup runs.
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach(buf)
    end
  end
end

return M
