-- ocltune database schema: the single source of the schema. Bump the version with every change
-- (kSchemaVersion in db/database.h) and add a migration step in db/migrate.cpp. Rows are appended or
-- upserted; the one deletion is of a `pending` measurement whose worker of a --devices group ended
-- without a fault (its claim released so another device measures it, db/claims.h).
--
-- Version history: 1 = first release; 2 = `imports` table (the shipped databases merged into a
-- system database) and complete provenance JSON on every `best` row; 3 = `pending` measurements
-- (written before each in-process evaluation), `abandoned` runs, the owning process of a run
-- (pid, process_start), and one `schema_version` row per version (its primary key).

-- One row per version the file has had (the newest is its version). The primary key makes creation
-- idempotent: two processes opening one fresh file at once insert the row once.
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER PRIMARY KEY,
  tool TEXT NOT NULL DEFAULT 'ocltune'
);

-- One row per device key: what the key stands for, and measured ceilings.
CREATE TABLE IF NOT EXISTS devices (
  device_key TEXT PRIMARY KEY,
  platform_name TEXT NOT NULL,
  platform_version TEXT NOT NULL,
  device_name TEXT NOT NULL,
  vendor TEXT NOT NULL,
  driver_version TEXT NOT NULL,
  device_type TEXT NOT NULL,
  compute_units INTEGER NOT NULL,
  clock_mhz INTEGER NOT NULL,
  global_mem_bytes INTEGER NOT NULL,
  local_mem_bytes INTEGER NOT NULL,
  max_work_group_size INTEGER NOT NULL,
  copy_bandwidth_gbs REAL,  -- clEnqueueCopyBuffer, read + write bytes over time
  peak_gflops REAL,         -- fp32 FMA microbenchmark
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL
);

-- One row per invocation of the tuner.
CREATE TABLE IF NOT EXISTS runs (
  run_id INTEGER PRIMARY KEY AUTOINCREMENT,
  device_key TEXT NOT NULL REFERENCES devices(device_key),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  -- abandoned: found `running` by a later run although its process is gone (killed by SIGKILL,
  -- the OOM killer, a power cut).
  status TEXT NOT NULL DEFAULT 'running'
    CHECK (status IN ('running', 'finished', 'failed', 'interrupted', 'abandoned')),
  tool_version TEXT NOT NULL,
  host TEXT NOT NULL DEFAULT '',
  command TEXT NOT NULL DEFAULT '',
  strategy TEXT NOT NULL DEFAULT '',
  seed INTEGER,
  compile_seconds REAL NOT NULL DEFAULT 0,
  verify_seconds REAL NOT NULL DEFAULT 0,
  timing_seconds REAL NOT NULL DEFAULT 0,
  -- The tuner's process, so a later run can tell whether a `running` run is still alive: its pid
  -- and "<boot id>/<start time in clock ticks>" (a reused pid has another start time).
  pid INTEGER,
  process_start TEXT NOT NULL DEFAULT ''
);

-- Every evaluation, failures included, committed as soon as it is measured.
CREATE TABLE IF NOT EXISTS measurements (
  measurement_id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(run_id),
  device_key TEXT NOT NULL,
  op TEXT NOT NULL,
  dtype TEXT NOT NULL,
  math TEXT NOT NULL DEFAULT 'exact',
  shape_key TEXT NOT NULL,
  shape_json TEXT NOT NULL,
  source_hash TEXT NOT NULL,   -- hash of the kernel files: a changed kernel is measured again
  params TEXT NOT NULL,        -- canonical text, KWG=16,MWG=64,...
  role TEXT NOT NULL DEFAULT 'search' CHECK (role IN ('default', 'search', 'final')),
  -- pending: written before an in-process evaluation and replaced by its outcome after it; one left
  -- by a dead process becomes `crash` (docs/CLI.md). Never a result: it has no time.
  status TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'launch_error', 'wrong_result', 'timeout',
                                         'crash', 'skipped', 'cut', 'pending')),
  error TEXT NOT NULL DEFAULT '',
  median_ns REAL, min_ns REAL, max_ns REAL, spread REAL, samples INTEGER,
  gflops REAL, gbs REAL,
  max_error REAL,
  compile_ms REAL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS measurements_by_problem
  ON measurements(device_key, op, dtype, math, shape_key, source_hash);

-- The fastest verified configuration per (device, op, dtype, math mode, shape).
CREATE TABLE IF NOT EXISTS best (
  device_key TEXT NOT NULL,
  op TEXT NOT NULL,
  dtype TEXT NOT NULL,
  math TEXT NOT NULL DEFAULT 'exact',
  shape_key TEXT NOT NULL,
  shape_json TEXT NOT NULL,
  params_json TEXT NOT NULL,
  median_ns REAL NOT NULL, min_ns REAL NOT NULL, max_ns REAL NOT NULL, spread REAL NOT NULL,
  gflops REAL, gbs REAL,
  default_median_ns REAL,      -- the untuned default configuration, same run
  confidence REAL,             -- runner-up median / winner median - 1 (how far ahead the winner is)
  source_hash TEXT NOT NULL,
  run_id INTEGER,
  measurement_id INTEGER,
  -- JSON object of strings: host, date (of the measurement), tool_version, driver, device, and
  -- source (the shipped or merged file a row came from; empty when measured into this file).
  provenance TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL,
  PRIMARY KEY (device_key, op, dtype, math, shape_key)
);

-- Every database merged in by `ocltune db import` (the system layer keeps what it was built from).
CREATE TABLE IF NOT EXISTS imports (
  import_id INTEGER PRIMARY KEY AUTOINCREMENT,
  source TEXT NOT NULL,          -- file name as given
  content_hash TEXT NOT NULL,    -- FNV-1a of the file's bytes: importing the same file twice is a no-op
  imported_at TEXT NOT NULL,
  tool_version TEXT NOT NULL,
  rows_added INTEGER NOT NULL,
  rows_replaced INTEGER NOT NULL,
  rows_rejected INTEGER NOT NULL
);
