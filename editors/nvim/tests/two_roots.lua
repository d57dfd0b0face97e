-- Drives the plugin in a real Neovim with files of two repositories open, and writes what
-- happened as JSON.
--
-- nvim --clean --headless -l two_roots.lua PLUGIN_DIR OUT CASES_JSON
--
-- CASES_JSON is a list of `{ file = ..., line = ..., text = ... }`, one per repository. For each,
-- in turn, it opens FILE, waits for the repomem client to attach and for the index of the
-- file's folder to be ready, replaces line LINE (0-based) with TEXT and asks for
-- `textDocument/completion` at its end. Then it reads `repomem/status` and the client's
-- workspace folders. tests/editors/test_nvim.py reads OUT.
local plugin, out, cases_json = unpack(arg)
local finish = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), 'harness.lua'))
local TIMEOUT_MS = 120000

vim.opt.runtimepath:prepend(plugin)

local result = { cases = {}, messages = {} }

local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(result.messages, params)
  return show_message(err, params, ctx)
end

local function run()
  local repomem = require('repomem')
  repomem.setup({ settings = { debounceMs = 0 } })
  local client
  for _, case in ipairs(vim.json.decode(cases_json)) do
    local seen = { file = case.file }
    table.insert(result.cases, seen)
    vim.cmd.edit(vim.fn.fnameescape(case.file))
    local bufnr = vim.api.nvim_get_current_buf()
    seen.attached = vim.wait(TIMEOUT_MS, function()
      return #vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr }) > 0
    end, 20)
    if not seen.attached then
      return
    end
    client = vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr })[1]
    seen.client_id = client.id
    seen.ready = vim.wait(TIMEOUT_MS, function()
      return repomem.is_ready(bufnr)
    end, 20)
    if not seen.ready then
      return
    end
    vim.api.nvim_buf_set_lines(bufnr, case.line, case.line + 1, false, { case.text })
    local params = {
      textDocument = { uri = vim.uri_from_bufnr(bufnr) },
      position = { line = case.line, character = #case.text },
    }
    local responses, err = vim.lsp.buf_request_sync(bufnr, 'textDocument/completion', params, 30000)
    assert(responses, err)
    local answer = assert(responses[client.id])
    assert(not answer.err, vim.inspect(answer))
    local items = answer.result and (answer.result.items or answer.result) or {}
    seen.items = vim.tbl_map(function(item)
      return { detail = item.detail, newText = item.textEdit.newText }
    end, items)
  end
  result.workspace_folders = vim.tbl_map(function(folder)
    return folder.name
  end, client.workspace_folders or {})
  local answer = assert(client:request_sync('repomem/status', {}, 10000))
  result.status_folders = vim.tbl_map(function(folder)
    return { root = folder.root, state = folder.state, completions = folder.completions }
  end, answer.result.folders)
end

finish(run, result, out)
