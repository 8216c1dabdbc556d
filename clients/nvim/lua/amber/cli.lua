-- How the plugin reaches Amber.
--
-- Two ways, both asynchronous (callbacks run on Neovim's main loop):
--
--   * `run`: the `amber` command as a job (`amber --json ARGS...`). It finds the
--     socket, starts the daemon on demand, applies the person's config, and is the
--     person's door: what it files is trusted as the person's.
--   * `rpc`: one JSON-RPC 2.0 request on the daemon's socket (vim.loop), for what the
--     command line has no command for: `session_start` (briefing and inbox) and
--     `session_end`. The socket path is the one `amber config show` prints, asked once
--     after `amber scope here` has made sure a daemon runs.
--
-- Every callback is `cb(result, err, note)`: `result` the decoded JSON on success,
-- `err` a message for a person on failure, `note` what `amber` said on stderr while
-- succeeding (the daemon was started, the answer is not fresh).

local M = {}

local uv = vim.loop

-- Operations in flight (jobs and socket requests); `require('amber').pending()`.
M.pending = 0

local function config()
  return require('amber').config
end

local function first_line(s)
  s = tostring(s or '')
  return (s:gsub('^%s+', ''):gsub('%s+$', ''))
end

-- The `amber` executable in force, or nil and why not.
function M.executable()
  local exe = config().amber or 'amber'
  if type(exe) ~= 'string' or exe == '' or vim.fn.executable(exe) ~= 1 then
    return nil,
      string.format(
        "the amber command was not found or is not executable: %s (install Amber, or set require('amber').setup({ amber = '/path/to/amber' }))",
        tostring(exe)
      )
  end
  return exe
end

-- The subcommand's words (`scope here`, `recall`), for messages.
function M.name(args)
  local words = {}
  for _, a in ipairs(args) do
    if a:sub(1, 1) == '-' or #words == 2 then
      break
    end
    table.insert(words, a)
  end
  return table.concat(words, ' ')
end

-- What `amber` said on stderr, one line per message without the `amber: ` prefix;
-- `cause_only` leaves out the note that it started the daemon (the failure follows it).
function M.said(lines, cause_only)
  local keep = {}
  for _, l in ipairs(lines or {}) do
    l = first_line(l):gsub('^amber: ', '')
    if l ~= '' and not (cause_only and l:match('^starting amberd in the background')) then
      table.insert(keep, l)
    end
  end
  return table.concat(keep, '; ')
end

-- Calls `cb` on the main loop, counting it as pending until it returned. An error in
-- `cb` is reported, never raised into libuv.
local function deliver(cb, ...)
  local args = { n = select('#', ...), ... }
  vim.schedule(function()
    local ok, e = pcall(cb, unpack(args, 1, args.n))
    M.pending = M.pending - 1
    if not ok then
      vim.notify('Amber: ' .. first_line(e), vim.log.levels.ERROR, { title = 'Amber' })
    end
  end)
end

-- Runs `amber --json ARGS...`. opts: `stdin` (a string written to its standard input),
-- `cwd` (default Neovim's), `timeout_ms` (default config.timeout_ms).
function M.run(args, opts, cb)
  opts = opts or {}
  M.pending = M.pending + 1
  local exe, why = M.executable()
  if not exe then
    deliver(cb, nil, why)
    return
  end
  local cmd = { exe }
  vim.list_extend(cmd, config().args or {})
  table.insert(cmd, '--json')
  vim.list_extend(cmd, args)
  local stdout, stderr = { '' }, { '' }
  local done = false
  local timer = uv.new_timer()
  local function finish(result, err, note)
    if done then
      return
    end
    done = true
    timer:stop()
    if not timer:is_closing() then
      timer:close()
    end
    deliver(cb, result, err, note)
  end
  local ok, job = pcall(vim.fn.jobstart, cmd, {
    cwd = opts.cwd or vim.fn.getcwd(),
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, data)
      stdout = data
    end,
    on_stderr = function(_, data)
      stderr = data
    end,
    on_exit = function(_, code)
      local out = table.concat(stdout, '\n')
      local said = M.said(stderr)
      if code ~= 0 then
        local cause = M.said(stderr, true)
        finish(nil, string.format('`amber %s` failed: %s', M.name(args), cause ~= '' and cause or ('exit status ' .. code)))
        return
      end
      local okj, decoded = pcall(vim.json.decode, out)
      if not okj then
        finish(nil, 'amber printed something that is not JSON: ' .. first_line(out):sub(1, 200))
        return
      end
      finish(decoded, nil, said ~= '' and said or nil)
    end,
  })
  if not ok or type(job) ~= 'number' or job <= 0 then
    finish(nil, 'cannot run ' .. exe .. ': ' .. first_line(job))
    return
  end
  if opts.stdin then
    vim.fn.chansend(job, opts.stdin)
  end
  vim.fn.chanclose(job, 'stdin')
  local timeout = opts.timeout_ms or config().timeout_ms or 60000
  timer:start(timeout, 0, function()
    vim.schedule(function()
      if not done then
        pcall(vim.fn.jobstop, job)
        finish(nil, string.format('amber %s gave no answer within %d ms', args[1] or '', timeout))
      end
    end)
  end)
end

-- One request on the socket. cb(result, err, kind): `kind` is the error's `data.kind`
-- from the daemon, or 'connect' when nothing answers on the socket.
function M.rpc(socket, method, params, cb, timeout_ms)
  M.pending = M.pending + 1
  local line = vim.json.encode({ jsonrpc = '2.0', id = 1, method = method, params = params }) .. '\n'
  local pipe = uv.new_pipe(false)
  local timer = uv.new_timer()
  local buf = ''
  local done = false
  local function finish(raw, err, kind)
    if done then
      return
    end
    done = true
    timer:stop()
    if not timer:is_closing() then
      timer:close()
    end
    pcall(function()
      pipe:read_stop()
    end)
    if not pipe:is_closing() then
      pipe:close()
    end
    if err then
      deliver(cb, nil, err, kind)
      return
    end
    -- Decoded on the main loop.
    deliver(function()
      local okj, msg = pcall(vim.json.decode, raw)
      if not okj or type(msg) ~= 'table' then
        return cb(nil, 'the daemon answered something that is not JSON')
      end
      if type(msg.error) == 'table' then
        local data = type(msg.error.data) == 'table' and msg.error.data or {}
        return cb(nil, string.format('%s: %s', method, tostring(msg.error.message)), data.kind)
      end
      cb(msg.result, nil)
    end)
  end
  local timeout = timeout_ms or config().timeout_ms or 60000
  timer:start(timeout, 0, function()
    finish(nil, string.format('%s: no answer from the daemon within %d ms', method, timeout), 'timeout')
  end)
  local ok, e = pcall(function()
    pipe:connect(socket, function(err)
      if err then
        finish(nil, string.format('no daemon answers on %s (%s)', socket, err), 'connect')
        return
      end
      pipe:read_start(function(rerr, data)
        if rerr then
          finish(nil, 'reading from the daemon: ' .. tostring(rerr), 'connect')
        elseif data == nil then
          finish(nil, 'the daemon closed the connection', 'connect')
        else
          buf = buf .. data
          local nl = buf:find('\n', 1, true)
          if nl then
            finish(buf:sub(1, nl - 1))
          end
        end
      end)
      pipe:write(line)
    end)
  end)
  if not ok then
    finish(nil, string.format('cannot connect to %s: %s', tostring(socket), first_line(e)), 'connect')
  end
end

-- The daemon's socket and data directory: `amber scope here` first (it starts the
-- daemon when none runs, and fails clearly when it cannot), then `amber config show`.
-- Cached; `fresh` asks again (after the daemon went away).
M.info = nil

function M.connect_info(fresh, cb)
  if M.info and not fresh then
    M.pending = M.pending + 1
    deliver(cb, M.info)
    return
  end
  M.run({ 'scope', 'here' }, {}, function(here, err, note)
    if err then
      return cb(nil, 'cannot reach the daemon: ' .. err)
    end
    M.run({ 'config', 'show' }, {}, function(conf, err2)
      if err2 then
        return cb(nil, err2)
      end
      if type(conf) ~= 'table' or type(conf.socket) ~= 'string' then
        return cb(nil, '`amber config show` named no socket')
      end
      M.info = { socket = conf.socket, data_dir = conf.data_dir, scope = here.scope, root = here.root }
      cb(M.info, nil, note)
    end)
  end)
end

-- A socket call that makes sure a daemon runs first, and tries once more (starting
-- the daemon again) when the one it knew of has gone away.
function M.call(method, params, cb)
  M.connect_info(false, function(info, err)
    if err then
      return cb(nil, err)
    end
    M.rpc(info.socket, method, params, function(result, err2, kind)
      if kind ~= 'connect' then
        return cb(result, err2, kind, info)
      end
      M.connect_info(true, function(info2, err3)
        if err3 then
          return cb(nil, err3)
        end
        M.rpc(info2.socket, method, params, function(r, e, k)
          cb(r, e, k, info2)
        end)
      end)
    end)
  end)
end

return M
