-- The plugin telling the server what is on screen (`repomem/visibleRanges`), in a real Neovim
-- against `repomem serve`; writes what it saw as JSON for tests/editors/test_nvim.py.
--
-- nvim --clean --headless -l visible.lua PLUGIN_DIR DRAFT DRAFT_TEXT TOP APP LINE TEXT OUT
--
-- Opens DRAFT, a new file never written (only the editor has its text, so the index cannot
-- find it), fills it with DRAFT_TEXT and scrolls its window so that line TOP (1-based) is at
-- the top; opens APP in a window above, goes back to the draft and again to APP (each buffer
-- entered), replaces APP's line LINE (0-based) with TEXT and asks for a completion at its end.
-- Records the visible ranges the plugin sent and the completion items' documentation.
local plugin, draft, draft_text, top, app, line, text, out = unpack(arg)
local finish = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), 'harness.lua'))
local TIMEOUT_MS = 60000

vim.opt.runtimepath:prepend(plugin)

local result = { sent = {}, items = {} }

local function run()
  local repomem = require('repomem')
  repomem.setup({ settings = { debounceMs = 0 } })

  vim.cmd.edit(vim.fn.fnameescape(draft))
  local draft_buf = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(draft_buf, 0, -1, false, vim.split(draft_text, '\n'))
  result.attached = vim.wait(TIMEOUT_MS, function()
    return #vim.lsp.get_clients({ name = 'repomem', bufnr = draft_buf }) > 0
  end, 20)
  if not result.attached then
    return
  end
  local client = vim.lsp.get_clients({ name = 'repomem', bufnr = draft_buf })[1]
  local notify = client.notify
  client.notify = function(self, method, params)
    if method == 'repomem/visibleRanges' then
      table.insert(result.sent, params)
    end
    return notify(self, method, params)
  end
  result.ready = vim.wait(TIMEOUT_MS, function()
    return repomem.is_ready(draft_buf)
  end, 20)
  if not result.ready then
    return
  end

  vim.cmd('normal! ' .. top .. 'Gzt')
  vim.cmd.split(vim.fn.fnameescape(app))
  local app_buf = vim.api.nvim_get_current_buf()
  vim.wait(TIMEOUT_MS, function()
    return #vim.lsp.get_clients({ name = 'repomem', bufnr = app_buf }) > 0
  end, 20)
  vim.cmd.wincmd('j')
  vim.cmd.wincmd('k')
  vim.wait(1000, function()
    return #result.sent >= 2
  end, 20)
  vim.wait(300) -- the throttle's last send

  local line_nr = assert(tonumber(line))
  vim.api.nvim_buf_set_lines(app_buf, line_nr, line_nr + 1, false, { text })
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(app_buf) },
    position = { line = line_nr, character = #text },
  }
  local responses, err = vim.lsp.buf_request_sync(app_buf, 'textDocument/completion', params, 30000)
  assert(responses, err)
  local answer = assert(responses[client.id])
  assert(not answer.err, vim.inspect(answer))
  local items = answer.result and (answer.result.items or answer.result) or {}
  result.items = vim.tbl_map(function(item)
    local doc = item.documentation
    return type(doc) == 'table' and doc.value or doc
  end, items)
end

finish(run, result, out)
