-- W1 as a pgbench custom script: one whole job per script run, 11 commands,
-- each ONE statement in its own transaction (autocommit, synchronous_commit
-- on: durable before the reply), each conditional on the job's state and lease
-- token and writing its history row. A statement that finds no row (a refused
-- transition) makes \gset fail, which aborts the client: a broken run shows.
-- Variables from the command line: clients, targets (-D).
-- Each client claims only its own kind and uses targets no other client uses.
\set slot random(0, (:targets / :clients) - 1)
\set target :client_id + :clients * :slot
\set token random(1, 1000000000000000)
WITH j AS (
  INSERT INTO jobs (id, kind, target, state, input)
  VALUES (nextval('job_ids'), 'k' || :client_id, 't' || :target, 'QUEUED',
          '{"window": "2026-05-06T00:00Z/PT1H"}')
  RETURNING id, version, kind, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'JobEnqueued', jsonb_build_object('kind', kind, 'target', target) FROM j
RETURNING job_id AS job \gset
WITH c AS (
  SELECT id, target FROM jobs
  WHERE state = 'QUEUED' AND kind = 'k' || :client_id
    AND NOT EXISTS (SELECT 1 FROM target_locks l WHERE l.target = jobs.target)
  ORDER BY priority DESC, id
  LIMIT 1
  FOR UPDATE SKIP LOCKED),
l AS (
  INSERT INTO target_locks (target, job_id) SELECT target, id FROM c RETURNING job_id),
u AS (
  UPDATE jobs SET state = 'LEASED', worker = 'w' || :client_id, lease_token = 'tok' || :token,
         lease_expires_at = now() + interval '60 seconds', version = version + 1,
         updated_at = now()
  FROM l WHERE jobs.id = l.job_id AND jobs.state = 'QUEUED'
  RETURNING jobs.id, jobs.version)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'JobLeased', jsonb_build_object('worker', 'w' || :client_id, 'lease_s', 60)
FROM u
RETURNING job_id AS claimed \gset
WITH u AS (
  UPDATE jobs SET state = 'RUNNING', execution_handle = 'handle-' || :claimed,
         version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'LEASED' AND lease_token = 'tok' || :token
  RETURNING id, version)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'JobStarted', '{}' FROM u
RETURNING job_id AS started \gset
WITH u AS (
  UPDATE jobs SET step_states[1] = 'RUNNING', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[1] = 'PENDING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepStarted', '{"step": "FETCH"}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[1] = 'DONE', step_outputs = step_outputs || '{"FETCH": {"rows": 1}}', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[1] = 'RUNNING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepSucceeded', '{"step": "FETCH", "output": {"rows": 1}}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[2] = 'RUNNING', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[2] = 'PENDING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepStarted', '{"step": "VALIDATE"}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[2] = 'DONE', step_outputs = step_outputs || '{"VALIDATE": {"rows": 1}}', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[2] = 'RUNNING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepSucceeded', '{"step": "VALIDATE", "output": {"rows": 1}}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[3] = 'RUNNING', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[3] = 'PENDING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepStarted', '{"step": "LOAD"}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[3] = 'DONE', step_outputs = step_outputs || '{"LOAD": {"rows": 1}}', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[3] = 'RUNNING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepSucceeded', '{"step": "LOAD", "output": {"rows": 1}}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[4] = 'RUNNING', version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[4] = 'PENDING'
  RETURNING id, version, target)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepStarted', '{"step": "AGGREGATE"}' FROM u
RETURNING job_id AS done \gset
WITH u AS (
  UPDATE jobs SET step_states[4] = 'DONE', step_outputs = step_outputs || '{"AGGREGATE": {"rows": 1}}', state = 'SUCCEEDED', lease_token = NULL, lease_expires_at = NULL, version = version + 1, updated_at = now()
  WHERE id = :claimed AND state = 'RUNNING' AND lease_token = 'tok' || :token AND step_states[4] = 'RUNNING'
  RETURNING id, version, target),
l AS (
  DELETE FROM target_locks USING u
  WHERE target_locks.target = u.target AND target_locks.job_id = u.id)
INSERT INTO job_history (job_id, version, type, data)
SELECT id, version, 'StepSucceeded', '{"step": "AGGREGATE", "output": {"rows": 1}}' FROM u
RETURNING job_id AS done \gset
