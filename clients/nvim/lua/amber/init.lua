-- Amber for Neovim: recall, remember, the project's briefing and the inbox.
-- See :help amber and clients/nvim/README.md.

local M = {}

local cli = require('amber.cli')
local view = require('amber.view')

local defaults = {
  -- The `amber` command (a name on $PATH or a path).
  amber = 'amber',
  -- Arguments put before every command (`{ '--data-dir', '/x' }`); the environment
  -- (AMBER_DATA_DIR, AMBER_SOCKET, AMBER_CONFIG) works as for the shell.
  args = {},
  -- nil: the scope of Neovim's working directory (its project, searched with `user`);
  -- a string: that scope (and those under it) for recall, remember and the briefing.
  scope = nil,
  -- How many hits :AmberRecall asks for.
  k = 10,
  -- 'buffer' (a scratch buffer mirroring `amber recall`) or 'quickfix' (the quickfix
  -- window). The quickfix list is filled either way.
  recall_view = 'buffer',
  -- The agent name the briefing's and inbox's session is opened as, and its token when
  -- that name is registered (`amber agent register nvim`).
  agent = 'nvim',
  agent_token = nil,
  -- Where inbox items are kept once received (the daemon hands each one to an agent
  -- name once): a JSON file, or false to keep them only while Neovim runs.
  inbox_file = nil, -- default: stdpath('data') .. '/amber/inbox.json'
  -- `--source FILE:LINES` on what :AmberRemember files.
  remember_source = true,
  -- Milliseconds before a call to amber or the daemon is given up.
  timeout_ms = 60000,
}

M.config = vim.deepcopy(defaults)

local TYPES = { 'fact', 'intent', 'pattern', 'invalidation', 'discovery', 'event', 'lifefact' }

local function notify(msg, level)
  vim.notify('Amber: ' .. msg, level or vim.log.levels.INFO, { title = 'Amber' })
end

local function err(msg)
  notify(msg, vim.log.levels.ERROR)
end

-- `f` wrapped so that any Lua error becomes one ERROR notification, never a traceback.
function M.protect(f)
  return function(...)
    local ok, e = pcall(f, ...)
    if not ok then
      local msg = tostring(e):gsub('^[^:]*%.lua:%d+: ', '')
      err(msg)
    end
  end
end

-- Operations in flight (for scripts and tests: wait until it is 0).
function M.pending()
  return cli.pending
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if opts and opts.args then
    M.config.args = opts.args
  end
  cli.info = nil
  M.create_commands()
end

-- Runs `start(cb)` to completion: (result, err).
local function sync(start)
  local done, res, e = false, nil, nil
  start(function(r, x)
    done, res, e = true, r, x
  end)
  if not vim.wait(M.config.timeout_ms + 5000, function()
    return done
  end, 20) then
    return nil, 'timed out'
  end
  return res, e
end

local function maybe_sync(cb, start)
  if cb then
    start(cb)
  else
    return sync(start)
  end
end

local function scope_of(opts)
  return (opts and opts.scope) or M.config.scope
end

-- ---------------------------------------------------------------------------------
-- Lua API. Each takes an optional callback `cb(result, err)`; without one it waits
-- and returns `result, err`.

-- recall(query, { scope?, all_scopes?, k?, mode?, no_floor? }, cb): `amber recall`'s
-- JSON answer; every hit also gets `from` (who it came from) and `headline` (its
-- evidence line), and a document hit `location` ({ filename, lnum, end_lnum }).
function M.recall(query, opts, cb)
  opts = opts or {}
  return maybe_sync(cb, function(done)
    if type(query) ~= 'string' or vim.trim(query) == '' then
      return done(nil, 'recall needs a query')
    end
    local args = { 'recall', '-k', tostring(opts.k or M.config.k) }
    if opts.all_scopes then
      table.insert(args, '--all-scopes')
    elseif scope_of(opts) then
      vim.list_extend(args, { '--scope', scope_of(opts) })
    end
    if opts.mode then
      vim.list_extend(args, { '--mode', opts.mode })
    end
    if opts.no_floor then
      table.insert(args, '--no-floor')
    end
    vim.list_extend(args, { '--', query })
    cli.run(args, {}, function(result, e, note)
      if e then
        return done(nil, e)
      end
      for _, h in ipairs(type(result.hits) == 'table' and result.hits or {}) do
        h.from = view.from_label(h.memory or {})
        h.headline = view.headline(h, result.disputed)
        h.location = view.location(h)
      end
      result.note = note
      done(result, nil)
    end)
  end)
end

-- get(id) -> the memory (`amber get`).
function M.get(id, cb)
  return maybe_sync(cb, function(done)
    if type(id) ~= 'string' or not id:match('^%x%x%x%x+$') then
      return done(nil, 'get needs a memory id (at least 4 hex digits), got ' .. vim.inspect(id))
    end
    cli.run({ 'get', id }, {}, function(m, e)
      done(m, e)
    end)
  end)
end

-- remember(text, { type?, scope?, to?, source? }) -> { id, seq, created, redacted }.
function M.remember(text, opts, cb)
  opts = opts or {}
  return maybe_sync(cb, function(done)
    if type(text) ~= 'string' or vim.trim(text) == '' then
      return done(nil, 'nothing to remember: the text is empty')
    end
    local args = { 'remember' }
    if opts.type then
      vim.list_extend(args, { '--type', opts.type })
    end
    if scope_of(opts) then
      vim.list_extend(args, { '--scope', scope_of(opts) })
    end
    if opts.to then
      vim.list_extend(args, { '--to', opts.to })
    end
    if opts.source then
      vim.list_extend(args, { '--source', opts.source })
    end
    table.insert(args, '-')
    cli.run(args, { stdin = text }, function(r, e)
      done(r, e)
    end)
  end)
end

-- The briefing's and inbox's session: agent `config.agent`, keyed by this Neovim
-- (pid and start time), so every call continues the same session; it is ended when
-- Neovim exits.
M.session_key = string.format('%d-%d', vim.fn.getpid(), os.time())
M.session = nil -- { id, socket }

local function end_session_on_exit()
  vim.api.nvim_create_autocmd('VimLeavePre', {
    group = vim.api.nvim_create_augroup('amber_session', { clear = true }),
    callback = function()
      M.end_session(true)
    end,
  })
end

-- Ends the session (if one was opened). `wait`: block until the daemon answered (at
-- most 2 s), as at exit.
function M.end_session(wait)
  local s = M.session
  if not s then
    return
  end
  M.session = nil
  local done = false
  cli.rpc(s.socket, 'session_end', { session_id = s.id }, function()
    done = true
  end, 2000)
  if wait then
    vim.wait(2500, function()
      return done
    end, 10)
  end
end

local function session_start(params, done)
  params.agent = M.config.agent
  params.agent_token = M.config.agent_token
  params.cwd = vim.fn.getcwd()
  params.key = M.session_key
  params.scope = scope_of(params)
  cli.call('session_start', params, function(r, e, _, info)
    if e then
      return done(nil, e)
    end
    if not M.session then
      end_session_on_exit()
    end
    M.session = { id = r.session_id, socket = info.socket }
    M.store_inbox(info, r.inbox)
    r.data_dir = info.data_dir
    done(r, nil)
  end)
end

-- brief({ prompt?, scope? }) -> session_start's result (`briefing`, `inbox`, `scope`).
-- Every call is briefed afresh (a new context of the session).
function M.brief(opts, cb)
  opts = opts or {}
  return maybe_sync(cb, function(done)
    local prompt = opts.prompt
    if prompt and vim.trim(prompt) == '' then
      prompt = nil
    end
    session_start({ prompt = prompt, scope = opts.scope, rebrief = true }, done)
  end)
end

-- inbox() -> { items = [...], new = n }: what was addressed to `config.agent` (or to
-- `all`), every item received so far in this store, oldest first.
function M.inbox(cb)
  return maybe_sync(cb, function(done)
    session_start({}, function(r, e)
      if e then
        return done(nil, e)
      end
      local items = M.inbox_items(r.data_dir)
      local new = 0
      for _, it in ipairs(items) do
        if it.new then
          new = new + 1
        end
      end
      done({ items = items, new = new, data_dir = r.data_dir }, nil)
    end)
  end)
end

-- ---------------------------------------------------------------------------------
-- The inbox as kept by the plugin: the daemon hands each item to an agent name once,
-- so what arrived is kept (per data directory) until dismissed.

local inbox_memory = {}

local function inbox_path()
  if M.config.inbox_file == false then
    return nil
  end
  return M.config.inbox_file or (vim.fn.stdpath('data') .. '/amber/inbox.json')
end

local function load_inbox()
  local path = inbox_path()
  if not path then
    return inbox_memory
  end
  if vim.fn.filereadable(path) ~= 1 then
    return {}
  end
  local ok, data = pcall(function()
    return vim.json.decode(table.concat(vim.fn.readfile(path), '\n'))
  end)
  if ok and type(data) == 'table' and type(data.stores) == 'table' then
    return data.stores
  end
  return {}
end

local function save_inbox(stores)
  local path = inbox_path()
  if not path then
    inbox_memory = stores
    return
  end
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local ok, e = pcall(vim.fn.writefile, { vim.json.encode({ version = 1, stores = stores }) }, path)
  if not ok then
    notify('cannot keep the inbox in ' .. path .. ': ' .. tostring(e), vim.log.levels.WARN)
  end
end

local function store_key(data_dir)
  return data_dir or '?'
end

function M.store_inbox(info, inbox)
  local got = type(inbox) == 'table' and type(inbox.items) == 'table' and inbox.items or {}
  if #got == 0 then
    return
  end
  local stores = load_inbox()
  local key = store_key(info.data_dir)
  local list = type(stores[key]) == 'table' and stores[key] or {}
  local seen = {}
  for _, it in ipairs(list) do
    seen[it.id] = true
  end
  for _, it in ipairs(got) do
    if not seen[it.id] then
      table.insert(list, {
        id = it.id,
        from = type(it.from) == 'string' and it.from or nil,
        to = type(it.to) == 'string' and it.to or nil,
        reply_to = type(it.reply_to) == 'string' and it.reply_to or nil,
        opening = it.opening,
        received = os.time(),
        new = true,
      })
    end
  end
  stores[key] = list
  save_inbox(stores)
  if inbox.waiting and inbox.waiting > 0 then
    notify(string.format('%d more inbox items wait for the next call', inbox.waiting))
  end
end

function M.inbox_items(data_dir)
  local list = load_inbox()[store_key(data_dir)]
  return type(list) == 'table' and list or {}
end

local function inbox_update(data_dir, f)
  local stores = load_inbox()
  local key = store_key(data_dir)
  stores[key] = f(type(stores[key]) == 'table' and stores[key] or {})
  save_inbox(stores)
end

-- ---------------------------------------------------------------------------------
-- Commands.

-- Shows one memory (`amber get`) in a scratch buffer.
function M.show_memory(id)
  M.get(id, function(m, e)
    if e then
      return err(e)
    end
    local lines = {
      'id:      ' .. tostring(m.id),
      'scope:   ' .. tostring(m.scope),
      'type:    ' .. tostring(m.type),
      'from:    ' .. view.from_label(m),
    }
    if type(m.to) == 'string' then
      table.insert(lines, 'to:      ' .. m.to)
    end
    if type(m.reply_to) == 'string' then
      table.insert(lines, 're:      ' .. m.reply_to)
    end
    if type(m.created_at) == 'number' then
      table.insert(lines, 'filed:   ' .. os.date('%Y-%m-%dT%H:%M:%S', math.floor(m.created_at / 1000)))
    end
    if type(m.source) == 'string' then
      table.insert(lines, 'source:  ' .. view.one_line(m.source, 200))
    end
    if type(m.forgotten_at) == 'number' then
      table.insert(lines, 'forgotten')
    end
    local actions = {}
    local doc = type(m.metadata) == 'table' and type(m.metadata.doc) == 'table' and m.metadata.doc or nil
    if doc and type(doc.path) == 'string' and type(doc.lines) == 'table' then
      table.insert(lines, string.format('file:    %s:%d (<CR> opens it)', doc.path, doc.lines[1] or 1))
      actions[#lines] = function()
        view.jump(doc.path, doc.lines[1])
      end
    end
    table.insert(lines, '')
    local head = #lines
    table.insert(lines, tostring(m.content))
    view.scratch('amber://memory/' .. tostring(m.id):sub(1, 8), lines, {
      actions = actions,
      cursor = head + 1,
    })
  end)
end

function M.recall_command(query)
  query = vim.trim(query or '')
  if query == '' then
    return err('usage: :AmberRecall {query}')
  end
  M.recall(query, {}, function(r, e)
    if e then
      return err(e)
    end
    if r.note then
      -- `amber` started the daemon (information), or the answer is not fresh or was
      -- ranked by words only (a warning; also said in the buffer).
      local started = r.note:match('^starting amberd') and not r.note:find(';', 1, true)
      notify(r.note, started and vim.log.levels.INFO or vim.log.levels.WARN)
    end
    local lines = { 'Amber recall: ' .. query }
    local actions = {}
    local qf = {}
    if type(r.team_unavailable) == 'string' then
      table.insert(lines, 'the team scopes were not searched: ' .. r.team_unavailable)
    end
    if type(r.degraded) == 'string' then
      table.insert(lines, 'ranked by words only (BM25), the embedding model is away: ' .. r.degraded)
    elseif r.fresh == false then
      table.insert(lines, 'not fresh: the newest memories may be missing')
    end
    local hits = type(r.hits) == 'table' and r.hits or {}
    if #hits == 0 then
      table.insert(lines, 'no good match (nothing above the relevance floor)')
      if type(r.elsewhere) == 'table' and #r.elsewhere > 0 then
        table.insert(lines, 'better matches are in ' .. table.concat(r.elsewhere, ', '))
      end
    end
    for i, h in ipairs(hits) do
      local m = h.memory or {}
      local function open()
        if h.location then
          view.jump(h.location.filename, h.location.lnum)
        else
          M.show_memory(m.id)
        end
      end
      local first = #lines + 1
      table.insert(lines, string.format('%d. %s', i, h.headline))
      if type(h.place) == 'table' then
        table.insert(lines, '   at ' .. view.describe_place(h.place))
      end
      table.insert(lines, '   ' .. view.one_line(m.content, 240))
      for l = first, #lines do
        actions[l] = open
      end
      local text = h.headline .. ' | ' .. view.one_line(m.content, 160)
      if h.location then
        table.insert(qf, {
          filename = h.location.filename,
          lnum = h.location.lnum,
          end_lnum = h.location.end_lnum,
          col = 1,
          text = text,
        })
      else
        table.insert(qf, { text = text, valid = 0 })
      end
    end
    vim.fn.setqflist({}, ' ', { title = 'Amber recall: ' .. query, items = qf })
    if M.config.recall_view == 'quickfix' then
      vim.cmd('botright copen')
    else
      table.insert(lines, '')
      table.insert(lines, '<CR>: a document hit opens its file at its line, any other hit its memory; q closes')
      view.scratch('amber://recall', lines, { actions = actions, cursor = 1 })
    end
  end)
end

-- The selected text of a :command's range: whole lines, or the characters of a
-- characterwise Visual selection when the range is that selection's.
local function range_text(opts)
  local buf = vim.api.nvim_get_current_buf()
  local l1, l2 = opts.line1, opts.line2
  local s, e = vim.fn.getpos("'<"), vim.fn.getpos("'>")
  if not opts.bang and opts.range == 2 and vim.fn.visualmode() == 'v' and s[2] == l1 and e[2] == l2 then
    local lines = vim.api.nvim_buf_get_lines(buf, l1 - 1, l2, false)
    if #lines == 0 then
      return ''
    end
    local last = lines[#lines]
    local ecol = math.min(e[3], #last)
    -- '> is the last character's first byte: take all of it.
    local b = last:byte(ecol) or 0
    local width = b >= 240 and 4 or b >= 224 and 3 or b >= 192 and 2 or 1
    lines[#lines] = last:sub(1, ecol + width - 1)
    lines[1] = lines[1]:sub(s[3])
    return table.concat(lines, '\n')
  end
  return table.concat(vim.api.nvim_buf_get_lines(buf, l1 - 1, l2, false), '\n')
end

local function parse_remember_args(fargs)
  local o = {}
  local known = {}
  for _, t in ipairs(TYPES) do
    known[t] = true
  end
  for _, a in ipairs(fargs) do
    local k, v = a:match('^%-?%-?(%w+)=(.+)$')
    if k == 'type' or k == 'scope' or k == 'to' or k == 'source' then
      o[k] = v
    elseif known[a] then
      o.type = a
    else
      error(string.format('unknown argument %q (a type: %s; or scope=S, to=AGENT, source=X)', a, table.concat(TYPES, ', ')))
    end
  end
  return o
end

function M.remember_command(opts)
  if opts.range == 0 then
    return err("select the text first: :'<,'>AmberRemember [type] [scope=S] [to=AGENT]")
  end
  local o = parse_remember_args(opts.fargs or {})
  local text = range_text(opts)
  if vim.trim(text) == '' then
    return err('nothing to remember: the selection is empty')
  end
  local file = vim.api.nvim_buf_get_name(0)
  if M.config.remember_source and not o.source and file ~= '' and vim.bo.buftype == '' then
    o.source = string.format('%s:%d-%d', vim.fn.fnamemodify(file, ':p'), opts.line1, opts.line2)
  end
  M.remember(text, o, function(r, e)
    if e then
      return err(e)
    end
    M.last_remembered = r.id
    local where = scope_of(o) or "this project's scope"
    if r.created then
      notify(string.format('remembered %s in %s', r.id, where))
    else
      notify(string.format('already remembered as %s in %s', r.id, where))
    end
    if (r.redacted or 0) > 0 then
      notify(string.format('%d secret(s) redacted before storing', r.redacted), vim.log.levels.WARN)
    end
  end)
end

-- The lines of a served text (briefing, inbox) and <CR> on a line naming a memory
-- (`- 1234abcd · ...`) opens it.
local function served_lines(text, lines, actions)
  for l in (tostring(text or '') .. '\n'):gmatch('(.-)\n') do
    table.insert(lines, l)
    local id = l:match('^%- (%x%x%x%x%x%x%x%x) ')
    if id then
      actions[#lines] = function()
        M.show_memory(id)
      end
    end
  end
  while lines[#lines] == '' do
    table.remove(lines)
  end
end

function M.brief_command(prompt)
  M.brief({ prompt = prompt }, function(r, e)
    if e then
      return err(e)
    end
    local b = type(r.briefing) == 'table' and r.briefing or {}
    local lines = {
      string.format('Amber briefing for %s (%s)', tostring(r.scope), tostring(b.query or '')),
      '',
    }
    local actions = {}
    local inbox = type(r.inbox) == 'table' and r.inbox or {}
    if type(inbox.text) == 'string' and inbox.text ~= '' then
      served_lines(inbox.text, lines, actions)
      table.insert(lines, '')
    end
    if type(b.text) == 'string' and b.text ~= '' then
      served_lines(b.text, lines, actions)
    else
      table.insert(lines, 'Nothing to brief: no memory of this project or of yours matched.')
    end
    table.insert(lines, '')
    table.insert(lines, '<CR> on a memory opens it; q closes')
    view.scratch('amber://briefing', lines, { actions = actions, cursor = 1 })
  end)
end

function M.inbox_command()
  M.inbox(function(r, e)
    if e then
      return err(e)
    end
    M.show_inbox(r.data_dir, r.new)
  end)
end

function M.show_inbox(data_dir, new)
  local items = M.inbox_items(data_dir)
  local lines = {
    string.format(
      'Amber inbox (%s): %d addressed to %s or all%s',
      M.config.agent,
      #items,
      M.config.agent,
      (new or 0) > 0 and string.format(', %d new', new) or ''
    ),
    '<CR> open · x dismiss · r refresh · q close',
    '',
  }
  local actions, by_line = {}, {}
  if #items == 0 then
    table.insert(lines, string.format('Nothing addressed to you (amber remember --to %s TEXT sends here).', M.config.agent))
  end
  for _, it in ipairs(items) do
    table.insert(
      lines,
      string.format(
        '%s %s · from %s · to %s%s · %s',
        it.new and '*' or ' ',
        tostring(it.id):sub(1, 8),
        it.from and view.quoted_name(it.from) or 'a person',
        tostring(it.to or '?'),
        it.reply_to and (' · re ' .. tostring(it.reply_to):sub(1, 8)) or '',
        view.one_line(it.opening, 200)
      )
    )
    by_line[#lines] = it.id
    actions[#lines] = function()
      inbox_update(data_dir, function(list)
        for _, x in ipairs(list) do
          if x.id == it.id then
            x.new = false
          end
        end
        return list
      end)
      M.show_memory(it.id)
    end
  end
  view.scratch('amber://inbox', lines, {
    split = 'botright 12split',
    actions = actions,
    cursor = #items > 0 and 4 or 1,
    keys = {
      r = function()
        M.inbox_command()
      end,
      x = function()
        local id = by_line[vim.api.nvim_win_get_cursor(0)[1]]
        if not id then
          return
        end
        inbox_update(data_dir, function(list)
          local keep = {}
          for _, x in ipairs(list) do
            if x.id ~= id then
              table.insert(keep, x)
            end
          end
          return keep
        end)
        M.show_inbox(data_dir, 0)
      end,
    },
  })
end

local function complete_remember(lead)
  local out = {}
  for _, c in ipairs(vim.list_extend(vim.deepcopy(TYPES), { 'scope=', 'scope=user', 'to=', 'source=' })) do
    if c:sub(1, #lead) == lead then
      table.insert(out, c)
    end
  end
  return out
end

function M.create_commands()
  local cmd = vim.api.nvim_create_user_command
  cmd('AmberRecall', M.protect(function(o)
    M.recall_command(o.args)
  end), { nargs = '+', desc = 'Amber: recall for this project' })
  cmd('AmberRemember', M.protect(M.remember_command), {
    nargs = '*',
    range = true,
    bang = true,
    complete = complete_remember,
    desc = 'Amber: file the selected text',
  })
  cmd('AmberBrief', M.protect(function(o)
    M.brief_command(o.args)
  end), { nargs = '*', desc = "Amber: this project's briefing" })
  cmd('AmberInbox', M.protect(function()
    M.inbox_command()
  end), { nargs = 0, desc = 'Amber: what was addressed to you' })
  cmd('AmberGet', M.protect(function(o)
    M.show_memory(o.args)
  end), { nargs = 1, desc = 'Amber: one memory' })
end

return M
