-- Amber for Neovim: the commands (:AmberRecall, :AmberRemember, :AmberBrief, :AmberInbox,
-- :AmberGet). Configure with require('amber').setup({ ... }); see :help amber.
if vim.g.loaded_amber then
  return
end
vim.g.loaded_amber = 1
if vim.fn.has('nvim-0.7') ~= 1 then
  vim.notify('Amber: needs Neovim 0.7 or later', vim.log.levels.ERROR)
  return
end
require('amber').create_commands()
