-- Drives the plugin in a real Neovim against `repomem serve` and writes what happened as JSON.
--
-- nvim --clean --headless -l complete.lua PLUGIN_DIR FILE LINE TEXT OUT SETUP_JSON [CASES_JSON]
--
-- Opens FILE, waits for the repomem client to attach and for its index to be ready, replaces
-- line LINE (0-based) with TEXT, asks for `textDocument/completion` at the end of that line,
-- asks `:Repomem ask` a question once the doc memory is read (the sources land in the quickfix
-- list), then turns completions off with `:Repomem disable` and asks again. Before that, for each
-- `{ text = ..., col = ... }` of CASES_JSON (Neovim >= 0.12), it sets line LINE to `text`, puts
-- the cursor at byte `col`, lets inline completion ask as on entering insert mode, accepts what
-- it shows (`vim.lsp.inline_completion.get`, what the plugin maps) and reads the line back.
-- tests/editors/test_nvim.py reads OUT.
local plugin, file, line, text, out, setup_json, cases_json = unpack(arg)
local finish = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), 'harness.lua'))
local line_nr = assert(tonumber(line))
local TIMEOUT_MS = 60000

vim.opt.runtimepath:prepend(plugin)

local result = { progress = {}, ready_events = {}, messages = {} }

-- what the server shows the user (bad settings, failed indexing)
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, params, ctx)
  table.insert(result.messages, params)
  return show_message(err, params, ctx)
end

-- a table as written in Lua: vim.json.decode marks empty objects, a user's `{}` is unmarked
local function plain(value)
  if type(value) ~= 'table' then
    return value
  end
  local copy = {}
  for key, item in pairs(value) do
    copy[key] = plain(item)
  end
  return copy
end

local function run()
  local repomem = require('repomem')
  repomem.setup(plain(vim.json.decode(setup_json)))

  vim.api.nvim_create_autocmd('LspProgress', {
    callback = function(event)
      local value = event.data.params.value
      table.insert(result.progress, { kind = value.kind, status = repomem.status() })
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    pattern = 'RepomemIndexReady',
    callback = function(event)
      table.insert(result.ready_events, event.data.params)
    end,
  })

  vim.cmd.edit(vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  result.attached = vim.wait(TIMEOUT_MS, function()
    return #vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr }) > 0
  end, 20)
  if not result.attached then
    return
  end
  local client = vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr })[1]
  result.root_dir = client.root_dir
  result.init_options = client.config.init_options
  result.omnifunc = vim.bo[bufnr].omnifunc

  result.ready = vim.wait(TIMEOUT_MS, function()
    return repomem.is_ready(bufnr)
  end, 20)
  result.status = repomem.status(bufnr)
  if not result.ready then
    return
  end

  vim.api.nvim_buf_set_lines(bufnr, line_nr, line_nr + 1, false, { text })
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = { line = line_nr, character = #text },
  }
  local function complete()
    local responses, err = vim.lsp.buf_request_sync(bufnr, 'textDocument/completion', params, 30000)
    assert(responses, err)
    local answer = responses[client.id]
    assert(answer and not answer.err, vim.inspect(answer))
    local items = answer.result and (answer.result.items or answer.result) or {}
    return vim.tbl_map(function(item)
      return { label = item.label, detail = item.detail, newText = item.textEdit.newText }
    end, items)
  end
  result.items = complete()

  local function server_status()
    local answer = assert(client:request_sync('repomem/status', {}, 10000, bufnr))
    return answer.result
  end
  local function server_settings()
    return server_status().settings
  end
  result.server_settings = server_settings()

  vim.wait(TIMEOUT_MS, function()
    local state = server_status().docs.state
    return state ~= 'waiting' and state ~= 'reading'
  end, 50)
  vim.cmd('Repomem ask How do I open a connection?')
  result.asked = vim.wait(30000, function()
    return #vim.fn.getqflist() > 0
  end, 20)
  result.ask_title = vim.fn.getqflist({ title = 1 }).title
  result.ask_sources = vim.tbl_map(function(item)
    return { path = vim.fn.fnamemodify(vim.fn.bufname(item.bufnr), ':p'), lnum = item.lnum }
  end, vim.fn.getqflist())

  if cases_json and vim.lsp.inline_completion then
    result.midline = {}
    for _, case in ipairs(vim.json.decode(cases_json)) do
      vim.api.nvim_buf_set_lines(bufnr, line_nr, line_nr + 1, false, { case.text })
      vim.api.nvim_win_set_cursor(0, { line_nr + 1, case.col })
      vim.api.nvim_exec_autocmds('InsertEnter', { buffer = bufnr })
      local accepted = vim.wait(3000, function()
        return vim.lsp.inline_completion.get({ bufnr = bufnr })
      end, 20)
      vim.wait(50) -- the item is applied on the next turn of the event loop
      table.insert(result.midline, {
        accepted = accepted,
        line = vim.api.nvim_buf_get_lines(bufnr, line_nr, line_nr + 1, true)[1],
      })
    end
  end

  vim.cmd('Repomem disable')
  result.status_disabled = repomem.status(bufnr)
  result.disabled = vim.wait(10000, function()
    return server_settings().enable == false
  end, 20)
  result.items_disabled = complete()
end

finish(run, result, out)
