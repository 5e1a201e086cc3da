-- wrk script of the pipeline bench: one SMS to one recipient per request, to either gateway.
--   TARGET=pigeon  POST /send, JSON, bearer token; accepted = HTTP 200 with "status":1 and "sent":1 (Pigeon
--                  answers its errors with HTTP 200 too). The gsmsmsid "<send ms>-<thread>-<n>" comes back
--                  as the DLR webhook's message_id, so the receiver knows when the message was sent.
--   TARGET=kannel  GET /cgi-bin/sendsms with dlr-mask 19 (one callback per message: delivered, undelivered
--                  or rejected) and a dlr-url carrying t=<send ms>; accepted = HTTP 202.
-- Env: THREADS (= wrk -t), MAX_REQ (sends over all threads), RATE (sends/s over all threads, 0 = as fast as
-- the answers come), DONE_FILE, PIGEON_TOKEN (Pigeon), RECEIVER (Kannel: the receiver's base URL).
-- Bounds: a thread that has sent its share of MAX_REQ sends only GET /nop (not counted: Kannel answers 404,
-- Pigeon 200 with -5 "no endpoint GET /nop") every 100 ms
-- on each connection until all its sends are answered, then appends a line to DONE_FILE and stops; so a
-- MAX_REQ round sends exactly MAX_REQ. wrk -d bounds the time (the orchestrator interrupts wrk once every
-- thread is done, since wrk itself always waits for -d).
-- Recipients: 336 + 8 digits, thread * 10,000,000 + n: distinct within a run for both gateways.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_usec; } pipeline_timeval;
int gettimeofday(pipeline_timeval *tv, void *tz);
]]
local timeval = ffi.new("pipeline_timeval")
local function now_ms()
  ffi.C.gettimeofday(timeval, nil)
  return tonumber(timeval.tv_sec) * 1000 + math.floor(tonumber(timeval.tv_usec) / 1000)
end

local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

local TARGET = os.getenv("TARGET") or "pigeon"
local THREADS = tonumber(os.getenv("THREADS") or "2")
local MAX_REQ = tonumber(os.getenv("MAX_REQ") or "1000000")
local RATE = tonumber(os.getenv("RATE") or "0")
local DONE_FILE = os.getenv("DONE_FILE")
local RECEIVER = os.getenv("RECEIVER") or ""
local pigeon_headers = {
  ["Content-Type"] = "application/json",
  ["Authorization"] = "Bearer " .. (os.getenv("PIGEON_TOKEN") or ""),
}

-- The main thread's list of the threads, for done().
local threads = {}
local next_thread_id = 0
function setup(thread)
  next_thread_id = next_thread_id + 1
  thread:set("id", next_thread_id)
  table.insert(threads, thread)
end

-- Per thread (globals, so that done() reads them with thread:get).
share, sent, answered, accepted, rejected, first_send, last_answer = 0, 0, 0, 0, 0, 0, 0
first_rejected = ""
local finished = false
local last_send = 0
local interval_ms, paced_from, slots = 0, 0, 0
-- wrk builds one request on the first thread before the run to check the script; it is never sent.
local check_call = false

function init(args)
  share = math.floor(MAX_REQ / THREADS)
  if id == 1 then
    share = share + (MAX_REQ - share * THREADS)
    check_call = true
  end
  if RATE > 0 then interval_ms = 1000 * THREADS / RATE end
end

-- Pacing: the thread's k-th send is due k * interval_ms after its first, on a fixed schedule; a send that
-- is late (every connection was waiting for an answer) goes at once, so the rate offered stays RATE as long
-- as the connections allow it.
function delay()
  if sent >= share then return 100 end
  if RATE <= 0 then return 0 end
  local now = now_ms()
  if paced_from == 0 then paced_from = now end
  local due = paced_from + slots * interval_ms
  slots = slots + 1
  if due <= now then return 0 end
  return math.floor(due - now)
end

function request()
  if check_call or sent >= share then
    check_call = false
    return wrk.format("GET", "/nop")
  end
  sent = sent + 1
  local t = now_ms()
  last_send = t
  if first_send == 0 then first_send = t end
  local number = "336" .. string.format("%08d", id * 10000000 + sent)
  if TARGET == "kannel" then
    local dlr_url = RECEIVER .. "/dlr?t=" .. string.format("%.0f", t) .. "&type=%d&to=%p"
    return wrk.format("GET", "/cgi-bin/sendsms?username=bench&password=bench&from=12345&to=" .. number ..
      "&text=Benchmark+message+" .. sent .. "&dlr-mask=19&dlr-url=" .. urlencode(dlr_url))
  end
  local body = '{"sms":{"message":{"text":"Benchmark message ' .. sent ..
    '","pushtype":"alert"},"recipients":{"gsm":[{"value":"' .. number .. '","gsmsmsid":"' ..
    string.format("%.0f", t) .. '-' .. id .. '-' .. sent .. '"}]}}}'
  return wrk.format("POST", "/send", pigeon_headers, body)
end

local function is_accepted(status, body)
  if TARGET == "kannel" then return status == 202 end
  return status == 200 and body:sub(1, 11) == '{"status":1' and body:find('"sent":1,', 1, true) ~= nil
end

local function is_nop(status, body)
  return status == 404 or body:find("no endpoint GET /nop", 1, true) ~= nil
end

function response(status, headers, body)
  if not is_nop(status, body) then
    answered = answered + 1
    last_answer = now_ms()
    if is_accepted(status, body) then
      accepted = accepted + 1
    else
      rejected = rejected + 1
      if first_rejected == "" then first_rejected = status .. " " .. body:sub(1, 200):gsub("%s", " ") end
    end
  end
  -- Done once every send is answered, or 10 s after the last send if some answer never comes.
  if not finished and sent >= share and (answered >= share or now_ms() - last_send > 10000) then
    finished = true
    if DONE_FILE then
      local f = io.open(DONE_FILE, "a")
      if f then f:write("done\n"); f:close() end
    end
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local total_sent, total_accepted, total_rejected, first, last, sample = 0, 0, 0, math.huge, 0, ""
  for _, thread in ipairs(threads) do
    total_sent = total_sent + (thread:get("sent") or 0)
    total_accepted = total_accepted + (thread:get("accepted") or 0)
    total_rejected = total_rejected + (thread:get("rejected") or 0)
    local f = thread:get("first_send") or 0
    if f > 0 and f < first then first = f end
    local l = thread:get("last_answer") or 0
    if l > last then last = l end
    if sample == "" then sample = thread:get("first_rejected") or "" end
  end
  if first == math.huge then first = 0 end
  local errors = summary.errors
  io.write(string.format(
    "RESULT sent=%d accepted=%d rejected=%d first_send_ms=%.0f last_answer_ms=%.0f http_p50_ms=%.2f http_p99_ms=%.2f socket_errors=%d\n",
    total_sent, total_accepted, total_rejected, first, last, latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, errors.connect + errors.read + errors.write + errors.timeout))
  if sample ~= "" then io.write("FIRST_REJECTED " .. sample .. "\n") end
end
