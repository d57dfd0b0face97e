--- Where each repomem client stands: indexing (from `$/progress`) or ready (from the server's
--- `repomem/indexReady` notification). Drives `require("repomem").status()` for statuslines.
local M = {}

M.INDEX_READY = 'repomem/indexReady'

--- @class repomem.Task
--- @field title string
--- @field message? string
--- @field percentage? number

--- @class repomem.ClientState
--- @field tasks table<integer|string, repomem.Task>
--- @field order (integer|string)[] tokens of running tasks, oldest first
--- @field ready? table the parameters of the last `repomem/indexReady`
--- @field folders table<string, table> the last `repomem/indexReady` of each folder, by root

--- @type table<integer, repomem.ClientState>
local clients = {}

--- @param client_id integer
--- @return repomem.ClientState
local function state(client_id)
  local s = clients[client_id]
  if not s then
    s = { tasks = {}, order = {}, folders = {} }
    clients[client_id] = s
  end
  return s
end

--- Records one `$/progress` work-done value of a repomem client.
--- @param client_id integer
--- @param token integer|string
--- @param value { kind: string, title?: string, message?: string, percentage?: number }
function M.on_progress(client_id, token, value)
  local s = state(client_id)
  if value.kind == 'begin' then
    s.tasks[token] = { title = value.title, message = value.message, percentage = value.percentage }
    table.insert(s.order, token)
  elseif value.kind == 'report' and s.tasks[token] then
    local task = s.tasks[token]
    task.message = value.message or task.message
    task.percentage = value.percentage or task.percentage
  elseif value.kind == 'end' then
    s.tasks[token] = nil
    s.order = vim.tbl_filter(function(t)
      return t ~= token
    end, s.order)
  end
  vim.cmd.redrawstatus()
end

--- Handler for `repomem/indexReady`: marks the client ready and fires `User RepomemIndexReady`.
--- @type lsp.Handler
function M.on_index_ready(_, params, ctx)
  local s = state(ctx.client_id)
  s.ready = type(params) == 'table' and params or {}
  if s.ready.root then
    s.folders[s.ready.root] = s.ready
  end
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'RepomemIndexReady',
    modeline = false,
    data = { client_id = ctx.client_id, params = params },
  })
  vim.cmd.redrawstatus()
end

--- Forgets a client that stopped.
--- @param client_id integer
function M.forget(client_id)
  clients[client_id] = nil
end

--- Whether the client's server reported an index ready: that of the folder at `root` when
--- given, else any.
--- @param client_id integer
--- @param root? string
--- @return boolean
function M.is_ready(client_id, root)
  local s = clients[client_id]
  if s == nil then
    return false
  end
  return root == nil and s.ready ~= nil or s.folders[root] ~= nil
end

--- One line for a statusline: the running task with its percentage ("repomem: indexing 42%"),
--- else "repomem: ready", "repomem: indexing" or, before the server reports anything,
--- "repomem: starting".
--- @param client_id integer
--- @return string
function M.describe(client_id)
  local s = clients[client_id]
  if not s then
    return 'repomem: starting'
  end
  local token = s.order[#s.order]
  if token ~= nil then
    local task = s.tasks[token]
    local percent = task.percentage and (' %d%%'):format(math.floor(task.percentage + 0.5)) or ''
    return task.title .. percent
  end
  -- progress has begun (and maybe ended) but the index is not announced yet
  return s.ready and 'repomem: ready' or 'repomem: indexing'
end

return M
