-- W1 on PostgreSQL: the schema of the comparison peer (scripts/bench-postgres.sh).
-- The same model as runledger's job, as a PostgreSQL user would write it:
-- a jobs table with the state machine in conditional updates, a per-target
-- lock (one row per held target, the primary key refuses a second holder),
-- and a history table with one row per transition, since runledger keeps
-- every transition in its log.
DROP TABLE IF EXISTS job_history, target_locks, jobs;
DROP SEQUENCE IF EXISTS job_ids;

CREATE SEQUENCE job_ids;

CREATE TABLE jobs (
  id               bigint PRIMARY KEY,
  kind             text NOT NULL,
  target           text NOT NULL,
  input            jsonb NOT NULL DEFAULT 'null',
  priority         int NOT NULL DEFAULT 0,
  max_attempts     int NOT NULL DEFAULT 3,
  attempt          int NOT NULL DEFAULT 1,
  state            text NOT NULL,  -- QUEUED LEASED RUNNING SUCCEEDED ...
  worker           text,
  lease_token      text,
  lease_expires_at timestamptz,
  execution_handle text,
  plan             text[] NOT NULL DEFAULT '{FETCH,VALIDATE,LOAD,AGGREGATE}',
  step_states      text[] NOT NULL DEFAULT '{PENDING,PENDING,PENDING,PENDING}',
  step_outputs     jsonb NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  version          int NOT NULL DEFAULT 1
);
-- The ready queue: only QUEUED rows, in claim order.
CREATE INDEX jobs_ready ON jobs (kind, priority DESC, id) WHERE state = 'QUEUED';

-- The per-target lock: a LEASED or RUNNING job holds its target.
CREATE TABLE target_locks (
  target text PRIMARY KEY,
  job_id bigint NOT NULL
);

CREATE TABLE job_history (
  id          bigserial PRIMARY KEY,
  job_id      bigint NOT NULL,
  version     int NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX job_history_job ON job_history (job_id, version);
