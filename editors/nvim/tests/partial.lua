-- Partial accept in a real Neovim against `repomem serve`; writes what happened as JSON.
--
-- nvim --clean --headless -l partial.lua PLUGIN_DIR FILE LINE TEXT OUT SETUP_JSON
--
-- Opens FILE, waits for the index, replaces line LINE (0-based) with TEXT, puts the cursor at
-- its end, then runs the insert-mode mappings that setup() made for the
-- suggestion's next word (twice) and for the rest of its line, reading the line after each,
-- and the server's counters before and after (tests/editors/test_nvim.py reads OUT).
local plugin, file, line, text, out, setup_json = unpack(arg)
local finish = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), 'harness.lua'))
local line_nr = assert(tonumber(line))
local TIMEOUT_MS = 60000

vim.opt.runtimepath:prepend(plugin)
-- the cursor after the line's last character, as in insert mode (the script runs in normal mode)
vim.opt.virtualedit = 'onemore'

local result = { steps = {} }

local function run()
  local repomem = require('repomem')
  local setup = vim.json.decode(setup_json)
  repomem.setup(setup)
  vim.cmd.edit(vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(TIMEOUT_MS, function()
    return repomem.is_ready(bufnr)
  end, 20), 'the index was not ready')
  local client = vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr })[1]
  local function server_status()
    return assert(client:request_sync('repomem/status', {}, 10000, bufnr)).result
  end

  local keys = { word = setup.inline.accept_word, line = setup.inline.accept_line }
  result.mappings = {}
  for name, lhs in pairs(keys) do
    local map = vim.fn.maparg(lhs, 'i', false, true)
    result.mappings[name] = map.desc
    keys[name] = map.callback
  end

  vim.api.nvim_buf_set_lines(bufnr, line_nr, line_nr + 1, false, { text })
  vim.api.nvim_win_set_cursor(0, { line_nr + 1, #text })
  -- the suggestion as an editor shows it first (a request at the cursor)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.context = { triggerKind = 2 }
  local first = assert(client:request_sync('textDocument/inlineCompletion', params, 30000, bufnr))
  result.suggestion = first.result.items[1] and first.result.items[1].insertText
  result.before = server_status()

  for _, step in ipairs({ 'word', 'word', 'line' }) do
    local changed = vim.api.nvim_buf_get_changedtick(bufnr)
    keys[step]()
    local done = vim.wait(10000, function()
      return vim.api.nvim_buf_get_changedtick(bufnr) ~= changed
    end, 10)
    table.insert(result.steps, {
      step = step,
      done = done,
      line = vim.api.nvim_buf_get_lines(bufnr, line_nr, line_nr + 1, true)[1],
      col = vim.api.nvim_win_get_cursor(0)[2],
    })
  end
  result.after = server_status()
end

finish(run, result, out)
