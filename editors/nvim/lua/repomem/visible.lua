--- Tells the server which lines of each buffer are on screen (`repomem/visibleRanges`), so
--- that code the user is looking at can reach the prompt of a completion in another file.
--- Sent when a window scrolls or a buffer is entered or attached, at most once per
--- `THROTTLE_MS` per buffer (the last position wins).
local M = {}

M.METHOD = 'repomem/visibleRanges'
M.THROTTLE_MS = 200

--- buffers with a send scheduled
--- @type table<integer, boolean>
local scheduled = {}

--- The visible lines of `bufnr` in the windows of the current tab page, as LSP ranges (0-based,
--- end line included).
--- @param bufnr integer
--- @return lsp.Range[]
function M.ranges(bufnr)
  local ranges = {}
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(win) == bufnr then
      local top = vim.fn.line('w0', win) - 1
      local bottom = vim.fn.line('w$', win) - 1
      table.insert(ranges, {
        start = { line = top, character = 0 },
        ['end'] = { line = bottom, character = 0 },
      })
    end
  end
  return ranges
end

--- Sends the visible ranges of `bufnr` to the `name` clients attached to it, now.
--- @param name string
--- @param bufnr integer
function M.send(name, bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local ranges = M.ranges(bufnr)
  if #ranges == 0 then
    return
  end
  local params = { uri = vim.uri_from_bufnr(bufnr), ranges = ranges }
  for _, client in ipairs(vim.lsp.get_clients({ name = name, bufnr = bufnr })) do
    client:notify(M.METHOD, params)
  end
end

--- Sends the visible ranges of `bufnr` once `THROTTLE_MS` have passed (one send per burst).
--- @param name string
--- @param bufnr integer
function M.schedule(name, bufnr)
  if scheduled[bufnr] then
    return
  end
  scheduled[bufnr] = true
  vim.defer_fn(function()
    scheduled[bufnr] = nil
    M.send(name, bufnr)
  end, M.THROTTLE_MS)
end

--- Creates the autocommands, in `group`, for the clients named `name`.
--- @param group integer
--- @param name string
function M.attach(group, name)
  vim.api.nvim_create_autocmd({ 'BufEnter', 'WinScrolled', 'LspAttach' }, {
    group = group,
    desc = 'repomem: tell the server which lines are on screen',
    callback = function(event)
      if event.event == 'WinScrolled' then
        -- every window that scrolled (v:event holds them by id, and "all")
        for win in pairs(vim.v.event) do
          local id = tonumber(win)
          if id and vim.api.nvim_win_is_valid(id) then
            M.schedule(name, vim.api.nvim_win_get_buf(id))
          end
        end
      else
        M.schedule(name, event.buf)
      end
    end,
  })
end

return M
