-- What the plugin shows: recall hits as `amber recall` prints them, scratch buffers,
-- and the jump from a document hit to its file and line.

local M = {}

local api = vim.api

local function num(x)
  return type(x) == 'number'
end

local function str(x)
  return type(x) == 'string' and x or nil
end

local function tbl(x)
  return type(x) == 'table' and x or {}
end

-- One line of plain text: control characters shown as U+FFFD, whitespace runs as one
-- space; cut at `max` characters with `…` (as `amber recall` does).
function M.one_line(s, max)
  s = tostring(s or '')
  s = s:gsub('[\r\n\t]', ' '):gsub('%c', '\239\191\189')
  s = vim.trim((s:gsub('%s+', ' ')))
  if max and vim.fn.strchars(s) > max then
    s = vim.fn.strcharpart(s, 0, max) .. '…'
  end
  return s
end

-- A name inside one of Amber's lines, as amber_core::origin::quoted_name prints it:
-- plain names as they are, anything else quoted with separator-like marks as `'`.
function M.quoted_name(s, max)
  local flat = vim.fn.strcharpart(M.one_line(s), 0, max or 80)
  if flat ~= '' and flat:match('^[%w%._:@/+%-~#]+$') then
    return flat
  end
  -- Amber's separator and quote marks: U+00B7, U+0387, U+2022, U+2027, U+2219, U+22C5,
  -- U+30FB, U+FF65, '"', U+201C, U+201D, U+00AB, U+00BB.
  local marks = {
    '\194\183', '\206\135', '\226\128\162', '\226\128\167', '\226\136\153', '\226\139\133',
    '\227\131\187', '\239\189\165', '"', '\226\128\156', '\226\128\157', '\194\171', '\194\187',
  }
  for _, c in ipairs(marks) do
    flat = flat:gsub(vim.pesc(c), "'")
  end
  return '"' .. flat .. '"'
end

-- Who a memory came from, as `amber recall` says it (amber_core::origin::label):
-- `person`, `agent NAME`, `external: TOOL`.
function M.from_label(memory)
  local meta = tbl(memory.metadata)
  local origin = tbl(meta.origin)
  local trust = str(meta.trust)
  if trust == nil then
    trust = meta.captured == true and 'external' or 'agent'
  end
  if trust == 'person' then
    return 'person'
  elseif trust == 'external' then
    local t = str(origin.tool)
    return (t and vim.trim(t) ~= '') and ('external: ' .. M.quoted_name(t)) or 'external'
  end
  local a = str(origin.agent) or str(memory.author)
  return (a and vim.trim(a) ~= '') and ('agent ' .. M.quoted_name(a)) or 'agent'
end

local PLACE_STATE = {
  current = 'unchanged since filed',
  moved = 'file changed since filed; this text is still there',
  changed = 'changed since filed: the file no longer holds this text',
  missing = 'the file is gone or unreadable',
}

-- `path:first-last (state)`, as shown beside a document hit.
function M.describe_place(place)
  local lines = tbl(place.lines)
  local a, b = lines[1] or 0, lines[2] or lines[1] or 0
  local span = a == b and tostring(a) or (a .. '-' .. b)
  return string.format(
    '%s:%s (%s)',
    M.one_line(place.path),
    span,
    PLACE_STATE[place.state] or tostring(place.state)
  )
end

-- A hit's headline: id, scope, type, who it came from, and every term that moved its
-- score (cli/src/recall.rs, `headline`).
function M.headline(hit, disputed)
  local m = tbl(hit.memory)
  local e = tbl(hit.evidence)
  local why = { string.format('fused %.4f', num(e.fused) and e.fused or 0) }
  if num(e.bm25_rank) and num(e.bm25_score) then
    table.insert(why, string.format('bm25 #%d %.2f', e.bm25_rank, e.bm25_score))
  end
  if num(e.vector_rank) and num(e.best_chunk_cosine) then
    table.insert(why, string.format('vector #%d cos %.3f', e.vector_rank, e.best_chunk_cosine))
  end
  if num(e.exact_rank) then
    table.insert(why, string.format('exact #%d', e.exact_rank))
  end
  if num(e.time_rank) then
    table.insert(why, string.format('time #%d', e.time_rank))
  end
  if num(e.graph_rank) then
    table.insert(why, string.format('graph #%d', e.graph_rank))
  end
  if num(e.session_bonus) then
    table.insert(why, string.format('session +%.4f', e.session_bonus))
  end
  if num(e.neighbour_bonus) then
    table.insert(why, string.format('neighbour +%.4f', e.neighbour_bonus))
  end
  local st = tbl(e.standing)
  table.insert(why, string.format('weight %.2f age %.2f', tonumber(st.weight) or 0, tonumber(st.age_factor) or 0))
  if str(st.filing) then
    table.insert(why, string.format('%s x%.2f', st.filing, tonumber(st.filing_factor) or 0))
  end
  table.insert(why, string.format('prior %.3f', tonumber(st.prior) or 0))
  local s, f = tonumber(st.successes) or 0, tonumber(st.failures) or 0
  if s + f > 0 then
    table.insert(why, string.format('%d successes %d failures', s, f))
  end
  if st.archived == true then
    table.insert(why, 'archived')
  end
  local sup = {}
  for _, id in ipairs(tbl(m.supersedes)) do
    table.insert(sup, tostring(id):sub(1, 8))
  end
  if #sup > 0 then
    table.insert(why, 'supersedes ' .. table.concat(sup, ', '))
  end
  for _, d in ipairs(tbl(disputed)) do
    if type(d) == 'table' and d.id == m.id then
      local by = {}
      for _, id in ipairs(tbl(d.by)) do
        table.insert(by, tostring(id):sub(1, 8))
      end
      table.insert(why, 'disputed by ' .. table.concat(by, ', '))
    end
  end
  return string.format(
    '%s [%s] %s from %s (%s)',
    tostring(m.id),
    tostring(m.scope),
    tostring(m.type),
    M.from_label(m),
    table.concat(why, ' · ')
  )
end

local function is_absolute(p)
  return type(p) == 'string' and p:sub(1, 1) == '/'
end

-- Where a document hit's text is now: { filename, lnum, end_lnum }, or nil for a
-- memory that is not a chunk of an ingested file. `place.path` is shown from the
-- project root; the chunk's metadata (and its `source`) hold the absolute path.
function M.location(hit, root)
  local place = type(hit.place) == 'table' and hit.place or nil
  if not place then
    return nil
  end
  local m = tbl(hit.memory)
  local doc = tbl(tbl(m.metadata).doc)
  local file
  if is_absolute(place.path) then
    file = place.path
  elseif is_absolute(doc.path) then
    file = doc.path
  elseif is_absolute(m.source) then
    file = m.source
  elseif type(place.path) == 'string' then
    file = (root or vim.fn.getcwd()) .. '/' .. place.path
  end
  if not file then
    return nil
  end
  local lines = tbl(place.lines)
  return {
    filename = file,
    lnum = tonumber(lines[1]) or 1,
    end_lnum = tonumber(lines[2]) or tonumber(lines[1]) or 1,
    state = place.state,
  }
end

-- Per-buffer actions: bufnr -> { [line] = function }.
M.actions = {}

-- Opens (or reuses) the scratch buffer `name` with `lines`, in a split. opts: `split`
-- (an Ex command opening a window), `filetype`, `actions` (line -> function run by
-- <CR>), `keys` (lhs -> function).
function M.scratch(name, lines, opts)
  opts = opts or {}
  local buf
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(b) and api.nvim_buf_get_name(b) == name then
      buf = b
      break
    end
  end
  if not buf then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
    api.nvim_create_autocmd('BufWipeout', {
      buffer = buf,
      once = true,
      callback = function()
        M.actions[buf] = nil
      end,
    })
  end
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].modifiable = true
  local flat = {}
  for _, l in ipairs(lines) do
    -- A buffer line holds no newline.
    for piece in (tostring(l) .. '\n'):gmatch('(.-)\n') do
      table.insert(flat, piece)
    end
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, flat)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = opts.filetype or 'amber'
  local win
  for _, w in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(w) == buf then
      win = w
      break
    end
  end
  if win then
    api.nvim_set_current_win(win)
  else
    vim.cmd(opts.split or 'botright split')
    api.nvim_win_set_buf(0, buf)
  end
  vim.wo.wrap = opts.wrap ~= false
  pcall(api.nvim_win_set_cursor, 0, { opts.cursor or 1, 0 })
  M.actions[buf] = opts.actions or {}
  local function act()
    local line = api.nvim_win_get_cursor(0)[1]
    local f = (M.actions[buf] or {})[line]
    if f then
      require('amber').protect(f)()
    end
  end
  vim.keymap.set('n', '<CR>', act, { buffer = buf, nowait = true, silent = true, desc = 'Amber: open' })
  vim.keymap.set('n', 'q', '<cmd>close<CR>', { buffer = buf, nowait = true, silent = true })
  for lhs, f in pairs(opts.keys or {}) do
    vim.keymap.set('n', lhs, require('amber').protect(f), { buffer = buf, nowait = true, silent = true })
  end
  return buf
end

-- Opens `file` at `lnum` in the window the person came from (a new split when the
-- scratch buffer is the only window).
function M.jump(file, lnum)
  local from = api.nvim_get_current_win()
  vim.cmd('wincmd p')
  if api.nvim_get_current_win() == from then
    vim.cmd('aboveleft split')
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local last = api.nvim_buf_line_count(0)
  pcall(api.nvim_win_set_cursor, 0, { math.max(1, math.min(lnum or 1, last)), 0 })
end

return M
