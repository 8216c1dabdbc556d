-- Drives the Amber plugin inside `nvim --headless -u NONE` for tests/nvim/test_nvim.py:
-- runs each command as a person would, waits for it, and writes what Neovim then shows
-- (buffer lines, the quickfix list, notifications, errors) as JSON to $AMBER_NVIM_OUT.
--
-- $AMBER_NVIM_MODE: `main` (recall, jump, remember, brief, inbox against a seeded
-- store) or `errors` (every command with the `amber` given in $AMBER_NVIM_AMBER, a bad
-- path or a store whose daemon cannot start).

local out = { notes = {}, steps = {}, lua_errors = {} }
local mode = os.getenv('AMBER_NVIM_MODE') or 'main'

-- Notifications are kept, not shown.
vim.notify = function(msg, level)
  table.insert(out.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

local function finish()
  out.messages = vim.api.nvim_exec('messages', true)
  out.errmsg = vim.v.errmsg
  vim.fn.writefile({ vim.json.encode(out) }, os.getenv('AMBER_NVIM_OUT'))
  vim.cmd('qa!')
end

-- An Ex command as typed; a Lua error (a traceback) escaping it is recorded.
local function ex(cmd)
  local ok, e = pcall(vim.cmd, cmd)
  if not ok then
    table.insert(out.lua_errors, { cmd = cmd, err = tostring(e) })
  end
end

local amber
local function wait()
  return vim.wait(40000, function()
    return amber.pending() == 0
  end, 20)
end

local function lines()
  return vim.api.nvim_buf_get_lines(0, 0, -1, false)
end

local function qflist()
  local items = vim.fn.getqflist()
  for _, q in ipairs(items) do
    if q.bufnr > 0 then
      q.filename = vim.fn.fnamemodify(vim.fn.bufname(q.bufnr), ':p')
    end
  end
  return items
end

local function step(name, f)
  local before = #out.notes
  local ok, e = pcall(f)
  if not ok then
    table.insert(out.lua_errors, { step = name, err = tostring(e) })
  end
  local s = out.steps[name] or {}
  s.waited = wait()
  s.notes = vim.list_slice(out.notes, before + 1)
  s.buffer = lines()
  s.bufname = vim.api.nvim_buf_get_name(0)
  s.cursor = vim.api.nvim_win_get_cursor(0)
  out.steps[name] = s
  return s
end

local ok, e = pcall(function()
  -- -u NONE loads no plugin: load ours as a plugin manager would.
  vim.cmd('runtime! plugin/amber.lua')
  out.commands = vim.fn.exists(':AmberRecall') == 2 and vim.fn.exists(':AmberRemember') == 2
    and vim.fn.exists(':AmberBrief') == 2 and vim.fn.exists(':AmberInbox') == 2
  amber = require('amber')
  amber.setup({
    amber = os.getenv('AMBER_NVIM_AMBER'),
    inbox_file = os.getenv('AMBER_NVIM_INBOX'),
  })

  if mode == 'errors' then
    for _, c in ipairs({ 'AmberRecall where is the cache', 'AmberBrief', 'AmberInbox', 'AmberGet 1234abcd' }) do
      step(c, function()
        ex(c)
      end)
    end
    step('remember', function()
      ex('enew')
      vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'one line to file' })
      ex('1AmberRemember')
    end)
    local r, err = amber.recall('where is the cache')
    out.api_recall = { ok = r ~= nil, err = err }
    return
  end

  -- Recall of the seeded fact: its evidence, in the buffer and the quickfix list.
  local s = step('recall_fact', function()
    ex('AmberRecall ' .. os.getenv('AMBER_NVIM_FACT_QUERY'))
  end)
  s.qf = qflist()
  s.qf_title = vim.fn.getqflist({ title = 1 }).title

  -- Recall of the document: its quickfix entry, then <CR> on its hit in the buffer.
  s = step('recall_doc', function()
    ex('AmberRecall ' .. os.getenv('AMBER_NVIM_DOC_QUERY'))
  end)
  s.qf = qflist()
  local target
  for i, l in ipairs(s.buffer) do
    if l:find(os.getenv('AMBER_NVIM_DOC_ID'), 1, true) then
      target = i
    end
  end
  s.hit_line = target
  local j = step('jump', function()
    if target then
      vim.api.nvim_win_set_cursor(0, { target, 0 })
      ex('execute "normal \\<CR>"')
    end
  end)
  j.line = j.cursor[1]

  -- Remember a linewise Visual selection (lines 3-4 of the notes), then a
  -- characterwise one (from the T of TAG-42 to the d of pushed on line 6).
  step('remember_lines', function()
    ex('edit ' .. vim.fn.fnameescape(os.getenv('AMBER_NVIM_NOTES')))
    ex('normal! 3GVj\27')
    ex("'<,'>AmberRemember pattern")
  end)
  out.steps.remember_lines.id = amber.last_remembered
  step('remember_chars', function()
    ex('normal! 6G0fTvfd\27')
    ex("'<,'>AmberRemember")
  end)
  out.steps.remember_chars.id = amber.last_remembered
  step('remember_bad_arg', function()
    ex("1AmberRemember colour=blue")
  end)

  -- The briefing, then the inbox and <CR> on its item.
  step('brief', function()
    ex('AmberBrief')
  end)
  s = step('inbox', function()
    ex('AmberInbox')
  end)
  local item
  for i, l in ipairs(s.buffer) do
    if l:find(os.getenv('AMBER_NVIM_MAIL_ID'):sub(1, 8), 1, true) then
      item = i
    end
  end
  s.item_line = item
  step('inbox_open', function()
    if item then
      vim.api.nvim_win_set_cursor(0, { item, 0 })
      ex('execute "normal \\<CR>"')
    end
  end)
  -- Asked again: the daemon hands an item over once; the panel keeps it.
  step('inbox_again', function()
    ex('AmberInbox')
  end)

  -- The Lua API, synchronously.
  local r, err = amber.recall(os.getenv('AMBER_NVIM_FACT_QUERY'))
  out.api_recall = { ok = r ~= nil, err = err, first = r and r.hits and r.hits[1] and {
    id = r.hits[1].memory.id, from = r.hits[1].from, headline = r.hits[1].headline,
  } }
  out.session = amber.session and amber.session.id
end)
if not ok then
  table.insert(out.lua_errors, { step = 'driver', err = tostring(e) })
end
finish()
