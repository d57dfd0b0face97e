-- Where the plugin and lsp_server/README.md's snippet put the repository root, and what a file
-- outside every repository gets; writes what it saw as JSON for tests/editors/test_nvim.py.
--
-- nvim --clean --headless -l roots.lua PLUGIN_DIR README FILES_JSON OUTSIDE_JSON ATTACH OUT
--
-- For each file of FILES_JSON: the plugin's root (`require('repomem').root`), and the root the
-- README's snippet starts a client with (`vim.lsp.start` stubbed) in that file's buffer. Then,
-- after `setup()`: opens each file of OUTSIDE_JSON (no client may start; the notifications are
-- recorded), runs `:checkhealth repomem`, and opens ATTACH, a file of a folder without git,
-- waiting for the real server's client to attach.
local plugin, readme, files_json, outside_json, attach, out = unpack(arg)
local TIMEOUT_MS = 60000

vim.opt.runtimepath:prepend(plugin)

local result = { roots = {}, notifications = {}, outside_clients = 0 }

local function snippet()
  local text = table.concat(vim.fn.readfile(readme), '\n')
  local section = assert(text:find('## Using it from a client by hand', 1, true))
  local from = assert(text:find('```lua\n', section, true)) + #'```lua\n'
  local to = assert(text:find('\n```', from, true))
  return assert(loadstring(text:sub(from, to)))
end

local function run()
  local repomem = require('repomem')
  local notify = vim.notify
  vim.notify = function(message, level)
    table.insert(result.notifications, { message = message, level = level })
  end

  local readme_start = snippet()
  local start = vim.lsp.start
  local started
  vim.lsp.start = function(config)
    started = config.root_dir
  end
  for _, file in ipairs(vim.json.decode(files_json)) do
    vim.cmd.edit(vim.fn.fnameescape(file))
    started = vim.NIL
    readme_start()
    table.insert(result.roots, { file = file, plugin = repomem.root(0) or vim.NIL, readme = started })
    vim.cmd('bwipeout!')
  end
  vim.lsp.start = start
  result.snippet_notifications = #result.notifications
  result.notifications = {}

  repomem.setup({})
  for _, file in ipairs(vim.json.decode(outside_json)) do
    vim.cmd.edit(vim.fn.fnameescape(file))
    vim.wait(500)
    result.outside_clients = result.outside_clients + #vim.lsp.get_clients({ bufnr = 0 })
  end
  vim.cmd('checkhealth repomem')
  result.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')

  vim.cmd.edit(vim.fn.fnameescape(attach))
  local bufnr = vim.api.nvim_get_current_buf()
  result.attached = vim.wait(TIMEOUT_MS, function()
    return #vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr }) > 0
  end, 20)
  if result.attached then
    result.attached_root = vim.lsp.get_clients({ name = 'repomem', bufnr = bufnr })[1].root_dir
  end
  vim.notify = notify
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  result.error = err
end
vim.fn.writefile({ vim.json.encode(result) }, out)
for _, client in ipairs(vim.lsp.get_clients()) do
  client:stop(true)
end
vim.cmd('qall!')
