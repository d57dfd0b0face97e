--- repomem for Neovim >= 0.11: runs `repomem serve` through `vim.lsp.config` / `vim.lsp.enable`,
--- turns on LSP completion (and, on Neovim >= 0.12, inline completion) in the buffers it
--- attaches to, and keeps the server's settings in step with `setup()` and `configure()`.
local status = require('repomem.status')
local visible = require('repomem.visible')

local M = {}

local NAME = 'repomem'

--- @class repomem.Options
--- @field cmd string[] the command that starts the server
--- @field filetypes string[]
--- @field root_markers string[] what marks a repository root: the nearest directory holding one
--- (a `pyproject.toml` only with a `[tool.repomem]` table), as `repomem` itself finds it
--- @field settings table sent as `repomem` in initializationOptions and didChangeConfiguration
--- @field completion { enable: boolean, autotrigger: boolean }
--- @field inline { enable: boolean, accept: string|false, accept_word: string|false, accept_line: string|false }
M.defaults = {
  cmd = { 'repomem', 'serve' },
  filetypes = {
    'python',
    'javascript',
    'javascriptreact',
    'typescript',
    'typescriptreact',
    'java',
    'go',
    'rust',
    'c',
    'cpp',
  },
  -- the nearest directory holding any one is the root, as for the `repomem` command line
  -- (repomem/workspace.py): a .repomem.toml deeper than the .git wins
  root_markers = { '.git', '.repomem', '.repomem.toml', 'pyproject.toml' },
  -- { enable = true, debounceMs = 75, backend = { backend = 'openai', url = ... },
  --   completion = { iterations = 1 }, index = { ... } }; unset keys come
  -- from the repository's .repomem.toml / pyproject.toml, then the server's defaults
  settings = {},
  completion = { enable = true, autotrigger = false },
  -- accept_word / accept_line: take the suggestion's next word / the rest of its line
  -- (false: no mapping); the rest of the suggestion stays with the server, which shows it again
  inline = {
    enable = true,
    accept = '<C-f>',
    accept_word = '<M-Right>',
    accept_line = '<M-C-Right>',
  },
}

--- @type repomem.Options
local options = vim.deepcopy(M.defaults)

--- Whether the `pyproject.toml` at `file` has a `[tool.repomem]` (or `[tool.repomem.*]`) table.
--- @param file string
--- @return boolean
local function configures_repomem(file)
  local ok, lines = pcall(vim.fn.readfile, file)
  if not ok then
    return false
  end
  for _, line in ipairs(lines) do
    if line:match('^%s*%[tool%.repomem[%]%.]') then
      return true
    end
  end
  return false
end

--- @param dir string
--- @return boolean
local function is_root(dir)
  for _, marker in ipairs(vim.iter(options.root_markers):flatten():totable()) do
    local path = vim.fs.joinpath(dir, marker)
    if marker == 'pyproject.toml' then
      if configures_repomem(path) then
        return true
      end
    elseif vim.uv.fs_stat(path) then
      return true
    end
  end
  return false
end

--- The repository root of a buffer or a path: the nearest directory at or above it holding one
--- of `root_markers`, as `repomem` finds it; nil outside any repository.
--- @param source integer|string buffer number (0: the current one) or path
--- @return string?
function M.root(source)
  local path = type(source) == 'number' and vim.api.nvim_buf_get_name(source) or source
  if path == '' then
    return nil
  end
  path = vim.fs.normalize(vim.fn.fnamemodify(path, ':p'))
  local dir = vim.fn.isdirectory(path) == 1 and path or vim.fs.dirname(path)
  if is_root(dir) then
    return dir
  end
  for parent in vim.fs.parents(dir) do
    if is_root(parent) then
      return parent
    end
  end
  return nil
end

--- Why no server starts for a file: said once a session, with what would make it start.
--- @param path string
--- @return string
function M.no_root_message(path)
  return ('repomem: %s is not inside a repository: no directory above it holds .git, .repomem,'
    .. ' .repomem.toml or a pyproject.toml with [tool.repomem], so the server is not started.'
    .. ' Run `repomem index` in the project\'s directory (or add a .repomem.toml there) and'
    .. ' reopen the file.'):format(vim.fn.fnamemodify(path, ':~'))
end

--- the last file the server was not started for, for lack of a root
--- @type string?
local unrooted = nil

--- The last file the server was not started for, for lack of a root (for `:checkhealth`).
--- @return string?
function M.unrooted()
  return unrooted
end

--- `vim.lsp.config`'s root_dir: the buffer's repository root, or a word why there is none
--- (once a session: every other file of such a folder would say it again).
--- @param bufnr integer
--- @param on_dir fun(root: string)
local function root_dir(bufnr, on_dir)
  local root = M.root(bufnr)
  if root then
    on_dir(root)
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    return
  end
  if unrooted == nil then
    vim.notify(M.no_root_message(name), vim.log.levels.WARN)
  end
  unrooted = name
end

--- The part of a suggestion `M.accept_word()` takes: blanks and punctuation up to the next
--- word, and that word (`opts` of `opts.host`, then `.host`, then `, opts`).
--- @param text string
--- @return string
function M.next_word(text)
  return text:match('^%s*[^%w_%s]*%s*[%w_]*')
end

--- The part of a suggestion `M.accept_line()` takes: up to and including its first line break.
--- @param text string
--- @return string
function M.next_line(text)
  local nl = text:find('\n', 1, true)
  return nl and text:sub(1, nl) or text
end

--- Inserts at the cursor the part `cut(text)` of the suggestion for it. The server answers the
--- same cursor from its cache (the suggestion shown), and the cursor after the part from the
--- same suggestion, so the rest is shown again without asking the model.
--- @param cut fun(text: string): string
--- @param on_done? fun(inserted: string?)
local function accept_part(cut, on_done)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = vim.lsp.get_clients({ name = NAME, bufnr = bufnr })[1]
  if not client then
    return
  end
  local win = vim.api.nvim_get_current_win()
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  local params = vim.lsp.util.make_position_params(win, client.offset_encoding)
  params.context = { triggerKind = 1 } -- invoked
  client:request('textDocument/inlineCompletion', params, function(err, result)
    local items = not err and result and (result.items or result) or {}
    local item = items[1]
    local text = item and (type(item.insertText) == 'string' and item.insertText or nil)
    local range = item and item.range
    local at = params.position
    local here = range == nil
      or (range['end'].line == at.line and range['end'].character == at.character)
    if
      not text
      or not here
      or not vim.api.nvim_buf_is_valid(bufnr)
      or vim.api.nvim_buf_get_changedtick(bufnr) ~= tick
    then
      -- nothing to take, a suggestion replacing the rest of the line, or the buffer moved on
      if on_done then
        on_done(nil)
      end
      return
    end
    local part = cut(text)
    local row, col = unpack(vim.api.nvim_win_get_cursor(win))
    local lines = vim.split(part, '\n', { plain = true })
    vim.api.nvim_buf_set_text(bufnr, row - 1, col, row - 1, col, lines)
    local last = #lines == 1 and col + #lines[1] or #lines[#lines]
    vim.api.nvim_win_set_cursor(win, { row + #lines - 1, last })
    if on_done then
      on_done(part)
    end
  end, bufnr)
end

--- Takes the next word of the suggestion at the cursor (see `M.next_word`).
--- @param on_done? fun(inserted: string?) called once done (nil: nothing was taken)
function M.accept_word(on_done)
  accept_part(M.next_word, on_done)
end

--- Takes the rest of the suggestion's line at the cursor (see `M.next_line`).
--- @param on_done? fun(inserted: string?) called once done (nil: nothing was taken)
function M.accept_line(on_done)
  accept_part(M.next_line, on_done)
end

--- @param client vim.lsp.Client
--- @param bufnr integer
local function on_attach(client, bufnr)
  if options.completion.enable then
    vim.lsp.completion.enable(true, client.id, bufnr, {
      autotrigger = options.completion.autotrigger,
    })
  end
  -- vim.lsp.inline_completion exists from Neovim 0.12 on
  local inline = vim.lsp.inline_completion
  if
    options.inline.enable
    and inline ~= nil
    and client:supports_method('textDocument/inlineCompletion', bufnr)
  then
    inline.enable(true, { bufnr = bufnr })
    if options.inline.accept then
      vim.keymap.set('i', options.inline.accept, inline.get, {
        buffer = bufnr,
        desc = 'repomem: accept the inline completion',
      })
    end
  end
  -- partial accept asks the server itself, so it also works before Neovim 0.12
  if options.inline.enable and options.inline.accept_word then
    vim.keymap.set('i', options.inline.accept_word, function()
      M.accept_word()
    end, { buffer = bufnr, desc = "repomem: accept the suggestion's next word" })
  end
  if options.inline.enable and options.inline.accept_line then
    vim.keymap.set('i', options.inline.accept_line, function()
      M.accept_line()
    end, { buffer = bufnr, desc = "repomem: accept the suggestion's line" })
  end
end

--- Setting keys whose values are JSON objects.
local SECTIONS = { backend = true, completion = true, index = true }

--- `settings` as they go over the wire: an empty Lua table would be sent as a JSON list, which
--- the server rejects where it expects an object.
--- @param settings table
--- @return table
local function wire(settings)
  local out = vim.empty_dict()
  for key, value in pairs(settings) do
    out[key] = (SECTIONS[key] and vim.tbl_isempty(value)) and vim.empty_dict() or value
  end
  return out
end

--- One server for every repository: a buffer under another root reuses the running client,
--- which adds that root as a workspace folder (the server indexes it, after the others).
--- @param client vim.lsp.Client
--- @param config vim.lsp.ClientConfig
--- @return boolean
local function reuse_client(client, config)
  if client.name ~= config.name or client:is_stopped() then
    return false
  end
  local known = vim.iter(client.workspace_folders or {}):any(function(folder)
    return folder.name == config.root_dir
  end)
  if config.root_dir and not known then
    client:_add_workspace_folder(config.root_dir)
  end
  return true
end

--- The config handed to `vim.lsp.config`.
--- @return vim.lsp.Config
local function lsp_config()
  return {
    cmd = options.cmd,
    filetypes = options.filetypes,
    root_dir = root_dir,
    workspace_required = true,
    reuse_client = reuse_client,
    init_options = { repomem = wire(options.settings) },
    settings = { repomem = wire(options.settings) },
    handlers = { [status.INDEX_READY] = status.on_index_ready },
    on_attach = on_attach,
    on_exit = function(_, _, client_id)
      status.forget(client_id)
    end,
  }
end

--- Configures and enables the repomem language server.
--- @param opts? repomem.Options|table
function M.setup(opts)
  if vim.fn.has('nvim-0.11') == 0 then
    vim.notify('repomem needs Neovim 0.11 or newer', vim.log.levels.ERROR)
    return
  end
  options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  vim.lsp.config(NAME, lsp_config())
  vim.lsp.enable(NAME)

  local group = vim.api.nvim_create_augroup('repomem', { clear = true })
  visible.attach(group, NAME)
  vim.api.nvim_create_autocmd('LspProgress', {
    group = group,
    desc = 'repomem: indexing progress for the statusline',
    callback = function(event)
      local client = vim.lsp.get_client_by_id(event.data.client_id)
      local params = event.data.params
      if client and client.name == NAME and type(params.value) == 'table' then
        status.on_progress(client.id, params.token, params.value)
      end
    end,
  })
  vim.api.nvim_create_user_command('Repomem', function(command)
    local action = command.fargs[1]
    if action == 'enable' or action == 'disable' then
      M.configure({ enable = action == 'enable' })
    elseif action == 'ask' then
      M.ask(table.concat(command.fargs, ' ', 2))
    else
      vim.notify(M.status() ~= '' and M.status() or 'repomem is not attached to this buffer')
    end
  end, {
    nargs = '*',
    complete = function()
      return { 'status', 'enable', 'disable', 'ask' }
    end,
    desc = 'repomem: status, enable/disable completions, or ask {question} about the docs',
  })
end

--- Changes server settings at run time (merged into those given to `setup()`), e.g.
--- `configure({ completion = { alpha = 0 } })`; running servers get them at once.
--- @param settings table
function M.configure(settings)
  options.settings = vim.tbl_deep_extend('force', options.settings, settings)
  vim.lsp.config(NAME, {
    init_options = { repomem = wire(options.settings) },
    settings = { repomem = wire(options.settings) },
  })
  for _, client in ipairs(vim.lsp.get_clients({ name = NAME })) do
    client.settings = { repomem = wire(options.settings) }
    client:notify('workspace/didChangeConfiguration', { settings = client.settings })
  end
end

--- @param bufnr? integer
--- @return vim.lsp.Client?
local function client_for(bufnr)
  return vim.lsp.get_clients({ name = NAME, bufnr = bufnr or 0 })[1]
end

--- The workspace folder of `client` that serves the buffer (the deepest one holding it), as
--- the server names it (the real path), or nil.
--- @param client vim.lsp.Client
--- @param bufnr? integer
--- @return string?
local function folder_for(client, bufnr)
  local path = vim.uv.fs_realpath(vim.api.nvim_buf_get_name(bufnr or 0))
  local best
  for _, folder in ipairs(path and client.workspace_folders or {}) do
    local root = vim.uv.fs_realpath(folder.name)
    if root and vim.fs.relpath(root, path) and (not best or #root > #best) then
      best = root
    end
  end
  return best
end

--- For statuslines: "repomem: indexing 42%", "repomem: ready", "repomem: ready (off)" when
--- completions are switched off, ... or "" when not attached.
--- @param bufnr? integer
--- @return string
function M.status(bufnr)
  local client = client_for(bufnr)
  if not client then
    return ''
  end
  local off = options.settings.enable == false and ' (off)' or ''
  return status.describe(client.id) .. off
end

--- Asks the server (`repomem.ask`) a question about the repository's docs. The cited sources
--- go to the quickfix list (titled with the question) and the answer, or why there is none,
--- is shown with vim.notify; `on_result(result)` also gets the server's answer when given.
--- @param question string
--- @param opts? { strategy?: string, form?: string }
--- @param on_result? fun(result: table)
function M.ask(question, opts, on_result)
  local client = client_for()
  if not client then
    vim.notify('repomem is not attached to this buffer', vim.log.levels.WARN)
    return
  end
  if vim.trim(question or '') == '' then
    vim.notify('usage: :Repomem ask {question}', vim.log.levels.WARN)
    return
  end
  local given = vim.tbl_extend('force', opts or {}, { folder = folder_for(client) })
  local arguments = next(given) and { question, given } or { question }
  local params = { command = 'repomem.ask', arguments = arguments }
  client:request('workspace/executeCommand', params, function(err, result)
    if err then
      vim.notify('repomem: ' .. err.message, vim.log.levels.ERROR)
      return
    end
    local root = result.root or client.root_dir or vim.fn.getcwd()
    local items = {}
    for _, source in ipairs(result.sources or {}) do
      local text = source.heading ~= '' and source.heading or vim.split(source.text, '\n')[1]
      table.insert(items, {
        filename = vim.fs.joinpath(root, source.path),
        lnum = source.line,
        text = (source.cited and '* ' or '') .. text,
      })
    end
    vim.fn.setqflist({}, ' ', { title = 'repomem ask: ' .. question, items = items })
    vim.notify(result.answer ~= vim.NIL and result.answer or vim.split(result.text, '\n')[1])
    if on_result then
      on_result(result)
    end
  end)
end

--- Whether the server attached to the buffer has reported the index of its folder ready.
--- @param bufnr? integer
--- @return boolean
function M.is_ready(bufnr)
  local client = client_for(bufnr)
  return client ~= nil and status.is_ready(client.id, folder_for(client, bufnr))
end

--- The options in effect (for `:checkhealth repomem`).
--- @return repomem.Options
function M.options()
  return options
end

return M
