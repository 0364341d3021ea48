-- Driver for tests/test_neovim.py: runs after the init.lua the test assembles from the tested
-- blocks of docs/editors/neovim.md, opens the model, drives GraphMend the way a user does
-- (keymaps, the code action picker, :commands, :write) and writes what Neovim ended up with as
-- JSON. Any Lua error ends Neovim with a non-zero exit code (:cquit).
--
-- Environment: GRAPHMEND_NVIM_SCENARIO (quickfix | mend_all | fix_on_save | command),
-- GRAPHMEND_NVIM_FILE (the model to open), GRAPHMEND_NVIM_OUT (the JSON to write),
-- GRAPHMEND_NVIM_TIMEOUT_MS (per wait).

local scenario = assert(os.getenv('GRAPHMEND_NVIM_SCENARIO'), 'GRAPHMEND_NVIM_SCENARIO not set')
local file = assert(os.getenv('GRAPHMEND_NVIM_FILE'), 'GRAPHMEND_NVIM_FILE not set')
local out_path = assert(os.getenv('GRAPHMEND_NVIM_OUT'), 'GRAPHMEND_NVIM_OUT not set')
local TIMEOUT = tonumber(os.getenv('GRAPHMEND_NVIM_TIMEOUT_MS') or '30000')

local result = { scenario = scenario, nvim = vim.version(), publishes = {}, messages = {}, timings = {} }
local t0 = vim.loop.hrtime()

-- Milliseconds since the driver started, at a named point (for the report).
local function mark(name)
  table.insert(result.timings, { name, math.floor((vim.loop.hrtime() - t0) / 1e6) })
end

-- ------------------------------------------------------------------ observation

-- Every publishDiagnostics (after Neovim handled it), with its version.
local publish = vim.lsp.handlers['textDocument/publishDiagnostics']
vim.lsp.handlers['textDocument/publishDiagnostics'] = function(err, res, ctx, config)
  local ret = publish(err, res, ctx, config)
  local codes = {}
  for _, d in ipairs(res and res.diagnostics or {}) do
    table.insert(codes, d.code)
  end
  table.insert(result.publishes, { version = res and res.version, codes = codes })
  return ret
end

-- Messages shown to the user (vim.notify, window/showMessage).
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(result.messages, { source = 'notify', level = level, message = tostring(msg) })
  return notify(msg, level, opts)
end
local show_message = vim.lsp.handlers['window/showMessage']
vim.lsp.handlers['window/showMessage'] = function(err, res, ctx, config)
  table.insert(result.messages, { source = 'showMessage', level = res and res.type, message = res and res.message })
  return show_message(err, res, ctx, config)
end

-- The code action picker: record what is offered, choose what the scenario asks for.
local pick_prefix = nil
local offered = nil
vim.ui.select = function(items, opts, on_choice)
  offered = {}
  local chosen = nil
  for _, item in ipairs(items) do
    local action = item[2] or item
    local title = opts.format_item and opts.format_item(item) or action.title
    table.insert(offered, { title = title, kind = action.kind, has_edit = action.edit ~= nil })
    if not chosen and pick_prefix and title:sub(1, #pick_prefix) == pick_prefix then
      chosen = item
    end
  end
  on_choice(chosen)
end

-- ------------------------------------------------------------------ helpers

local function wait(what, cond)
  if not vim.wait(TIMEOUT, cond, 20) then
    error('timed out after ' .. TIMEOUT .. ' ms waiting for ' .. what, 2)
  end
end

local function graphmend_client(bufnr)
  for _, client in pairs(vim.lsp.buf_get_clients(bufnr)) do
    if client.name == 'graphmend' then
      return client
    end
  end
end

local function lines(bufnr)
  return vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
end

local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == 'graphmend' then
      table.insert(out, {
        code = d.code, lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
        severity = d.severity, message = d.message,
      })
    end
  end
  table.sort(out, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.code < b.code)
  end)
  return out
end

-- Wait until the server has published diagnostics for the buffer's current text.
local function wait_current(bufnr, what)
  wait(what, function()
    local last = result.publishes[#result.publishes]
    return last ~= nil and last.version == vim.lsp.util.buf_versions[bufnr]
  end)
end

local function find(diags, code)
  for _, d in ipairs(diags) do
    if d.code == code then
      return d
    end
  end
  error('no ' .. code .. ' diagnostic among ' .. vim.inspect(diags))
end

local function press(keys)
  -- `normal` (without !) so that the user's mappings apply; <Leader> is mapleader (default \).
  local typed = keys:gsub('<Leader>', vim.g.mapleader or '\\')
  vim.cmd('normal ' .. typed)
end

local function floating_windows()
  local wins = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      table.insert(wins, win)
    end
  end
  return wins
end

-- ------------------------------------------------------------------ scenarios

local function start()
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[bufnr].filetype
  wait('the graphmend client to attach and initialize', function()
    local c = graphmend_client(bufnr)
    return c ~= nil and c.initialized == true
  end)
  local client = graphmend_client(bufnr)
  result.client = {
    cmd = client.config.cmd,
    root_dir = client.config.root_dir,
    offset_encoding = client.offset_encoding,
    resolve_provider = type(client.resolved_capabilities.code_action) == 'table'
      and client.resolved_capabilities.code_action.resolveProvider or false,
    attached_clients = vim.tbl_count(vim.lsp.buf_get_clients(bufnr)),
  }
  mark('attached')
  wait_current(bufnr, 'the first graphmend diagnostics')
  mark('diagnostics')
  result.diagnostics_before = diagnostics(bufnr)
  result.maps = {}
  for _, m in ipairs(vim.api.nvim_buf_get_keymap(bufnr, 'n')) do
    table.insert(result.maps, m.lhs)
  end
  return bufnr, client
end

local function finish(bufnr, what)
  mark('applied')
  wait_current(bufnr, 'diagnostics after ' .. what)
  mark('diagnostics after')
  result.lines = lines(bufnr)
  result.modified = vim.bo[bufnr].modified
  result.diagnostics_after = diagnostics(bufnr)
end

local scenarios = {}

-- Hover (the K keymap and the request itself), then the GM101 quick fix via \ca + the picker.
function scenarios.quickfix()
  local bufnr, client = start()
  local gm101 = find(result.diagnostics_before, 'GM101')

  vim.api.nvim_win_set_cursor(0, { gm101.lnum + 1, gm101.col })
  local params = vim.lsp.util.make_position_params()
  local hover = client.request_sync('textDocument/hover', params, TIMEOUT, bufnr)
  assert(hover and not hover.err and hover.result, 'no hover: ' .. vim.inspect(hover))
  result.hover = hover.result.contents
  press('K')
  wait('the hover window', function()
    return #floating_windows() > 0
  end)
  local float = floating_windows()[1]
  result.hover_window = vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(float), 0, -1, true)
  vim.api.nvim_win_close(float, true)

  local before = vim.api.nvim_buf_get_changedtick(bufnr)
  pick_prefix = 'GraphMend (GM101)'
  vim.api.nvim_win_set_cursor(0, { gm101.lnum + 1, gm101.col })
  press('<Leader>ca')
  wait('the code action picker', function()
    return offered ~= nil
  end)
  result.offered = offered
  wait('the quick fix to change the buffer', function()
    return vim.api.nvim_buf_get_changedtick(bufnr) ~= before
  end)
  finish(bufnr, 'the quick fix')
end

-- \cm: graphmend.mend_all (the source.fixAll.graphmend action, resolved and applied).
function scenarios.mend_all()
  local bufnr = start()
  press('<Leader>cm')
  finish(bufnr, 'mend all')
end

-- :write with the BufWritePre autocmd of section 4.
function scenarios.fix_on_save()
  local bufnr = start()
  vim.cmd('write')
  finish(bufnr, 'the write')
end

-- :GraphMendFixAll (workspace/executeCommand -> workspace/applyEdit), then :GraphMendLog.
function scenarios.command()
  local bufnr = start()
  local before = vim.api.nvim_buf_get_changedtick(bufnr)
  vim.cmd('GraphMendFixAll')
  wait('graphmend.fixAll to change the buffer', function()
    return vim.api.nvim_buf_get_changedtick(bufnr) ~= before
  end)
  finish(bufnr, 'graphmend.fixAll')
  vim.cmd('GraphMendLog')
  result.log_window = lines(0)
  result.log_window_buftype = vim.bo.buftype
end

-- ------------------------------------------------------------------ run

local function write_result()
  local f = assert(io.open(out_path, 'w'))
  f:write(vim.fn.json_encode(result))
  f:close()
end

local ok, err = xpcall(function()
  local run = scenarios[scenario] or error('unknown scenario ' .. scenario)
  run()
end, debug.traceback)
if not ok then
  result.error = err
end
mark('done')
local wrote, werr = pcall(write_result)
if not ok or not wrote then
  io.stderr:write('e2e.lua: ' .. tostring(err or werr) .. '\n')
  vim.cmd('cquit')
end
vim.cmd('qall!')
