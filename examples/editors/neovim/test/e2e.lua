-- Driven by cmd/palace's TestNeovimEndToEnd: with the palace module set up by
-- init.lua and a Go file open, ask the real `palace lsp` for hover, code
-- lens, inlay hints and palace/context, wait for diagnostics, and write what
-- came back as JSON to $PALACE_E2E_OUT, then quit.
local out_path = os.getenv('PALACE_E2E_OUT')
local result = { errors = {}, nvim = vim.version() }

local function fail(msg)
  table.insert(result.errors, msg)
end

local ok, err = pcall(function()
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  local client
  local ready = vim.wait(20000, function()
    for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
      if c.name == 'palace' and c.server_capabilities and next(c.server_capabilities) ~= nil then
        client = c
        return true
      end
    end
    return false
  end, 20)
  if not ready then
    fail('no initialized palace client attached to ' .. uri)
    return
  end
  local function req(method, params)
    local res, e = vim.lsp.buf_request_sync(bufnr, method, params, 20000)
    if not res then
      fail(method .. ': ' .. tostring(e))
      return nil
    end
    local r = res[client.id]
    if r == nil then
      fail(method .. ': no answer from palace')
      return nil
    end
    if r.err or r.error then
      fail(method .. ': ' .. vim.inspect(r.err or r.error))
      return nil
    end
    return r.result
  end
  local function pos(line, character)
    return { textDocument = { uri = uri }, position = { line = line, character = character } }
  end
  result.hover = req('textDocument/hover', pos(6, 14))
  result.hover_migrate = req('textDocument/hover', pos(4, 5))
  result.codelens = req('textDocument/codeLens', { textDocument = { uri = uri } })
  result.inlay = req('textDocument/inlayHint', {
    textDocument = { uri = uri },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 100, character = 0 } },
  })
  result.context = req('palace/context', { uri = uri, dry_run = true })

  vim.wait(20000, function()
    return #vim.diagnostic.get(bufnr) > 0
  end, 20)
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then
      code = d.user_data.lsp.code
    end
    table.insert(result.diagnostics, {
      lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity,
      source = d.source, message = d.message, code = code,
    })
  end

  -- What the user sees: the example draws inlay hints as virtual text on
  -- Neovim < 0.10, and the code lens through vim.lsp.codelens.
  local palace = require('palace')
  vim.wait(10000, function()
    return #vim.api.nvim_buf_get_extmarks(bufnr, palace.ns, 0, -1, {}) > 0
  end, 20)
  result.virtual_text = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, palace.ns, 0, -1, { details = true })) do
    table.insert(result.virtual_text, { line = m[2], text = m[4].virt_text[1][1] })
  end
  vim.wait(10000, function()
    return #vim.lsp.codelens.get(bufnr) > 0
  end, 20)
  result.codelens_shown = {}
  for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
    table.insert(result.codelens_shown, { line = l.range.start.line, title = l.command and l.command.title })
  end
end)
if not ok then
  fail(tostring(err))
end
vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
vim.cmd('qa!')
