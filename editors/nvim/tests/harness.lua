-- What every driver script does last: run its `run` function, keep a Lua error as
-- `result.error` (the Python test shows it), count and stop the repomem clients so that
-- Neovim exits, and write `result` as JSON to `out` for tests/editors/test_nvim.py.
--
-- local finish = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), 'harness.lua'))
-- finish(run, result, out)
return function(run, result, out)
  local ok, err = xpcall(run, debug.traceback)
  if not ok then
    result.error = err
  end
  result.clients = #vim.lsp.get_clients({ name = 'repomem' })
  for _, client in ipairs(vim.lsp.get_clients({ name = 'repomem' })) do
    client:stop()
  end
  vim.wait(5000, function()
    return #vim.lsp.get_clients({ name = 'repomem' }) == 0
  end, 20)
  vim.fn.writefile({ vim.json.encode(result) }, out)
end
