--- `:checkhealth repomem`: the things that keep the server from starting.
local M = {}

function M.check()
  vim.health.start('repomem')
  if vim.fn.has('nvim-0.11') == 1 then
    vim.health.ok('Neovim ' .. tostring(vim.version()))
  else
    vim.health.error('Neovim 0.11 or newer is needed (vim.lsp.config, vim.lsp.completion)')
  end
  if vim.lsp.inline_completion then
    vim.health.ok('inline completion (ghost text) is available')
  else
    vim.health.info('inline completion needs Neovim 0.12; list completion works')
  end

  local repomem = require('repomem')
  local exe = repomem.options().cmd[1]
  if vim.fn.executable(exe) == 1 then
    vim.health.ok(('server: %s'):format(vim.fn.exepath(exe)))
  else
    vim.health.error(
      ('"%s" is not an executable on PATH'):format(exe),
      {
        'install it from a clone of the repomem repository: pip install . (the PyPI package'
          .. ' named "repomem" is another project)',
        "or setup({ cmd = { '/path/to/venv/bin/repomem', 'serve' } })",
      }
    )
  end

  local cwd_root = repomem.root(vim.fn.getcwd())
  if cwd_root then
    vim.health.ok(('repository root of the current directory: %s'):format(cwd_root))
  else
    vim.health.info('the current directory is not inside a repository')
  end
  local unrooted = repomem.unrooted()
  if unrooted then
    vim.health.warn(repomem.no_root_message(unrooted))
  end

  local clients = vim.lsp.get_clients({ name = 'repomem' })
  if #clients == 0 then
    vim.health.info('no repomem server is running (open a file inside a repository)')
  end
  for _, client in ipairs(clients) do
    vim.health.ok(
      ('client %d at %s: %s'):format(
        client.id,
        client.root_dir or '?',
        require('repomem.status').describe(client.id)
      )
    )
  end
end

return M
