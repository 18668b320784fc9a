-- A minimal init.lua: put examples/editors/neovim on the runtimepath (or
-- copy lua/palace/ into your config's lua/ folder) and call setup.
--   nvim -u examples/editors/neovim/init.lua some/file.go
-- $PALACE_BIN names the binary (default: palace on PATH); $PALACE_LSP_ARGS
-- adds arguments, e.g. "--mode=agent --log-file=/tmp/palace-lsp.log".
local here = debug.getinfo(1, 'S').source:sub(2):match('(.*/)') or './'
vim.opt.runtimepath:prepend(here)

local cmd = { vim.env.PALACE_BIN or 'palace', 'lsp' }
for arg in string.gmatch(vim.env.PALACE_LSP_ARGS or '', '%S+') do
  table.insert(cmd, arg)
end

require('palace').setup({
  cmd = cmd,
  hints = { hover = true, codeLens = true, inlayHints = true, diagnostics = true },
})
