-- Driven by cmd/palace's TestNeovimOneStatePerCard and
-- TestNeovimShowsStaleCard: with the palace module set up by init.lua and
-- a file open, record what the real `palace lsp` shows — hover, code lens,
-- inlay hints (as the module draws them on Neovim < 0.10), the pack,
-- diagnostics and every publishDiagnostics notification — then, by
-- $PALACE_E2E_SCENARIO:
--   state: edit the buffer once, run the code lens, and count the
--          publishes of that change;
--          open $PALACE_E2E_CARD_FILE and record its diagnostics;
--   stale: run palace.verify on $PALACE_E2E_CARD and record what shows
--          after.
-- Writes JSON to $PALACE_E2E_OUT, then quits.
local out_path = os.getenv('PALACE_E2E_OUT')
local scenario = os.getenv('PALACE_E2E_SCENARIO')
local result = { errors = {}, nvim = vim.version(), published = {} }

local function fail(msg)
  table.insert(result.errors, msg)
end

-- Every publish, as the client receives it.
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, res, ctx, config)
  if res then
    table.insert(result.published, { uri = res.uri, version = res.version, n = #res.diagnostics })
  end
  return publish(err, res, ctx, config)
end

local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then
      code = d.user_data.lsp.code
    end
    table.insert(out, { lnum = d.lnum, end_lnum = d.end_lnum, col = d.col, severity = d.severity, message = d.message, code = code })
  end
  return out
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
  local function req(buf, method, params)
    local res, e = vim.lsp.buf_request_sync(buf, method, params, 20000)
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
  local line = tonumber(os.getenv('PALACE_E2E_LINE') or '0')
  local col = tonumber(os.getenv('PALACE_E2E_COL') or '0')
  local function look(key)
    local view = {}
    view.hover = req(bufnr, 'textDocument/hover', { textDocument = { uri = uri }, position = { line = line, character = col } })
    view.hover_top = req(bufnr, 'textDocument/hover', { textDocument = { uri = uri }, position = { line = 0, character = 0 } })
    view.codelens = req(bufnr, 'textDocument/codeLens', { textDocument = { uri = uri } })
    view.inlay = req(bufnr, 'textDocument/inlayHint', {
      textDocument = { uri = uri },
      range = { start = { line = 0, character = 0 }, ['end'] = { line = 1000, character = 0 } },
    })
    view.context = req(bufnr, 'palace/context', { uri = uri, dry_run = true })
    view.diagnostics = diagnostics(bufnr)
    -- What the user sees of the hints: the module's virtual text.
    require('palace').refresh_inlay_hints(bufnr)
    vim.wait(5000, function()
      return #vim.api.nvim_buf_get_extmarks(bufnr, require('palace').ns, 0, -1, {}) >= #(view.inlay or {})
    end, 20)
    view.virtual_text = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, require('palace').ns, 0, -1, { details = true })) do
      table.insert(view.virtual_text, { line = m[2], text = m[4].virt_text[1][1] })
    end
    result[key] = view
  end

  local want = tonumber(os.getenv('PALACE_E2E_DIAGNOSTICS') or '1')
  vim.wait(20000, function()
    return #vim.diagnostic.get(bufnr) >= want
  end, 20)
  look('before')

  if scenario == 'state' then
    -- One edit: a second sql.Open line. Its diagnostics must arrive once.
    local n = #vim.diagnostic.get(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, 11, 11, false, { '\tdb2, _ := sql.Open("sqlite", p+"2")', '\t_ = db2' })
    local version = vim.lsp.util.buf_versions[bufnr]
    vim.wait(20000, function()
      return #vim.diagnostic.get(bufnr) > n
    end, 20)
    -- Then what a user does next: run the code lens (the pack for the
    -- file, a real request whose telemetry commits). Nothing shown
    -- changes, so nothing is published again.
    local lens = req(bufnr, 'textDocument/codeLens', { textDocument = { uri = uri } })
    if lens and lens[1] then
      req(bufnr, 'workspace/executeCommand', { command = lens[1].command.command, arguments = lens[1].command.arguments })
    end
    vim.wait(2500, function()
      return false
    end, 50)
    result.edit_version = version
    result.edit_diagnostics = diagnostics(bufnr)

    local card_file = os.getenv('PALACE_E2E_CARD_FILE')
    vim.cmd('edit ' .. vim.fn.fnameescape(card_file))
    local cbuf = vim.api.nvim_get_current_buf()
    vim.wait(20000, function()
      return #vim.diagnostic.get(cbuf) > 0
    end, 20)
    result.card_file = diagnostics(cbuf)
  elseif scenario == 'stale' then
    local card = os.getenv('PALACE_E2E_CARD')
    result.verify = req(bufnr, 'workspace/executeCommand', { command = 'palace.verify', arguments = { { uri = uri, id = card } } })
    vim.wait(20000, function()
      for _, d in ipairs(vim.diagnostic.get(bufnr)) do
        if string.find(d.message, 'stale', 1, true) or string.find(d.message, 'changed since', 1, true) then
          return false
        end
      end
      return true
    end, 20)
    look('after')
  end
end)
if not ok then
  fail(tostring(err))
end
vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
vim.cmd('qa!')
