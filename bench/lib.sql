-- bench/lib.sql: the tables and functions bench/run.sh drives.  The
-- candidates themselves are in bench/candidates.sql.

-------------------------------------------------------------------------------
-- Per-call cost
-------------------------------------------------------------------------------

-- Candidates whose min_version (a server_version_num) is above the server's
-- are removed by bench_prune() before anything runs, their targets with them.
CREATE TABLE bench_call (
	ord serial,
	label text PRIMARY KEY,
	expr text NOT NULL,
	role text CHECK (role IN ('baseline', 'reference')),
	chart boolean NOT NULL DEFAULT false,	-- drawn in the chart
	min_version int
);
CREATE UNIQUE INDEX bench_call_one_baseline ON bench_call (role) WHERE role = 'baseline';

-- label's per-call cost must be at most ratio times ref's.
CREATE TABLE bench_call_target (
	ord serial,
	label text NOT NULL REFERENCES bench_call (label) ON DELETE CASCADE,
	ratio numeric NOT NULL CHECK (ratio > 0),
	ref text NOT NULL REFERENCES bench_call (label) ON DELETE CASCADE
);

CREATE TABLE bench_timing (
	round int NOT NULL,			-- 0 is the warm-up, discarded
	label text NOT NULL REFERENCES bench_call (label),
	ms double precision NOT NULL
);

-- bench_time(expr, n): milliseconds to run SELECT count(expr) FROM
-- generate_series(1, n) g, measured in the server.
--
-- Why clock_timestamp() around EXECUTE rather than EXPLAIN ANALYZE: the
-- query runs exactly as a client's would, with no per-row instrumentation
-- (EXPLAIN ANALYZE counts every row through every node even with TIMING OFF),
-- and nothing outside the server (client, socket, psql) is in the
-- measurement.  What is in it besides execution, parsing and planning a
-- one-line query, is some tens of microseconds against 100 ms or more, the
-- same for every candidate, so it cancels against the baseline.
CREATE FUNCTION bench_time(expr text, n bigint) RETURNS double precision
LANGUAGE plpgsql AS $$
DECLARE
	query text := format('SELECT count(%s) FROM generate_series(1, %s) g', expr, n);
	started timestamptz;
	elapsed interval;
	got bigint;
BEGIN
	started := clock_timestamp();
	EXECUTE query INTO got;
	elapsed := clock_timestamp() - started;
	IF got IS DISTINCT FROM n THEN
		RAISE EXCEPTION 'bench: % counted % rows, not %', query, got, n;
	END IF;
	RETURN extract(epoch FROM elapsed) * 1000;
END
$$;

-- One round: every candidate once, the order rotated by the round number so
-- that no candidate always runs first or right after the same neighbour.
CREATE PROCEDURE bench_round(round int, n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	k int := (SELECT count(*) FROM bench_call);
	c record;
BEGIN
	FOR c IN
		SELECT label, expr
		FROM (SELECT label, expr, row_number() OVER (ORDER BY ord) - 1 AS i
			  FROM bench_call) numbered
		ORDER BY (i - round % k + k) % k
	LOOP
		INSERT INTO bench_timing VALUES (round, c.label, bench_time(c.expr, n));
	END LOOP;
END
$$;

-- Median time of each candidate over the measured rounds, and its per-call
-- cost: (median - the baseline's median) / n, in nanoseconds.
CREATE FUNCTION bench_call_stats(n bigint)
RETURNS TABLE (ord int, label text, role text, median_ms double precision,
			   per_call_ns double precision)
LANGUAGE sql STABLE AS $$
	WITH med AS (
		SELECT c.ord, c.label, c.role,
			percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) AS ms
		FROM bench_call c JOIN bench_timing t ON t.label = c.label
		WHERE t.round > 0
		GROUP BY c.ord, c.label, c.role
	)
	SELECT m.ord, m.label, m.role, m.ms, (m.ms - b.ms) * 1e6 / n
	FROM med m CROSS JOIN (SELECT ms FROM med WHERE role = 'baseline') b
	ORDER BY m.ord
$$;

-- x rounded to d decimals, as text; '-' for NULL.
CREATE FUNCTION bench_num(x double precision, d int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(round(x::numeric, d)::text, '-')
$$;

-- The per-call table, one line a row, with a ratio column per reference.
CREATE FUNCTION bench_call_report(n bigint) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	refs text[] := ARRAY(SELECT c.label FROM bench_call c
						 WHERE c.role = 'reference' ORDER BY c.ord);
	ref_ns double precision[];
	lw int;
	rw int[];
	line text;
	s record;
	i int;
BEGIN
	SELECT greatest(max(length(c.label)), 5) + 2 INTO lw FROM bench_call c;
	SELECT array_agg(st.per_call_ns ORDER BY u.i) INTO ref_ns
	FROM unnest(refs) WITH ORDINALITY u (label, i)
		JOIN bench_call_stats(n) st ON st.label = u.label;

	line := rpad('query', lw) || lpad('median ms', 11) || lpad('per-call ns', 14);
	FOR i IN 1 .. coalesce(array_length(refs, 1), 0) LOOP
		rw[i] := greatest(length(refs[i]) + 3, 8) + 3;
		line := line || lpad('vs ' || refs[i], rw[i]);
	END LOOP;
	RETURN NEXT line;
	RETURN NEXT repeat('-', length(line));

	FOR s IN SELECT * FROM bench_call_stats(n) LOOP
		line := rpad(s.label, lw) || lpad(bench_num(s.median_ms, 1), 11)
			|| lpad(CASE WHEN s.role = 'baseline' THEN '-'
					ELSE bench_num(s.per_call_ns, 1) END, 14);
		FOR i IN 1 .. coalesce(array_length(refs, 1), 0) LOOP
			line := line || lpad(CASE
				WHEN s.role = 'baseline' OR NOT ref_ns[i] > 0 THEN '-'
				ELSE bench_num(s.per_call_ns / ref_ns[i], 2) END, rw[i]);
		END LOOP;
		RETURN NEXT line;
	END LOOP;
END
$$;

-- The per-call target lines, OK or MISSED.
CREATE FUNCTION bench_call_targets(n bigint) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	t record;
	ratio double precision;
BEGIN
	FOR t IN
		SELECT c.label, tg.ratio AS target_ratio, tg.ref AS target_ref,
			st.per_call_ns AS ns, rst.per_call_ns AS ref_ns
		FROM bench_call_target tg
			JOIN bench_call c ON c.label = tg.label
			JOIN bench_call_stats(n) st ON st.label = tg.label
			JOIN bench_call_stats(n) rst ON rst.label = tg.ref
		ORDER BY c.ord, tg.ord
	LOOP
		ratio := CASE WHEN t.ref_ns > 0 THEN t.ns / t.ref_ns END;
		RETURN NEXT format('%s per-call / %s per-call = %s (%s ns / %s ns; target <= %s) %s',
			t.label, t.target_ref, bench_num(ratio, 3), bench_num(t.ns, 1),
			bench_num(t.ref_ns, 1), t.target_ratio,
			CASE WHEN ratio <= t.target_ratio THEN 'OK' ELSE 'MISSED' END);
	END LOOP;
END
$$;

-------------------------------------------------------------------------------
-- Primary-key index size
-------------------------------------------------------------------------------

CREATE TABLE bench_pk (
	ord serial,
	label text PRIMARY KEY,
	coltype text NOT NULL,
	expr text,
	target_mb numeric CHECK (target_mb > 0),	-- per million rows
	size_ref text REFERENCES bench_pk (label) ON DELETE SET NULL,
	insert_ratio numeric CHECK (insert_ratio > 0),
	insert_ref text REFERENCES bench_pk (label),
	cosid boolean NOT NULL DEFAULT false,	-- one of cosid's (a colour in the chart)
	min_version int,
	CHECK ((insert_ratio IS NULL) = (insert_ref IS NULL))
);

CREATE TABLE bench_pk_result (
	label text PRIMARY KEY REFERENCES bench_pk (label),
	insert_ms double precision NOT NULL,
	index_bytes bigint NOT NULL
);

-- For each candidate a table bench_pk_<ord> filled with n rows in one
-- INSERT, timed (with its commit) in the server; then its index's size.
-- A checkpoint before each insert, so that none pays for writing out the
-- one before.
CREATE PROCEDURE bench_pk_run(n bigint)
LANGUAGE plpgsql AS $$
DECLARE
	p record;
	tbl text;
	started timestamptz;
	elapsed interval;
	got bigint;
BEGIN
	FOR p IN SELECT * FROM bench_pk ORDER BY ord LOOP
		tbl := 'bench_pk_' || p.ord;
		EXECUTE format('CREATE TABLE %I (id %s PRIMARY KEY%s)', tbl, p.coltype,
			CASE WHEN p.expr IS NULL THEN '' ELSE ' DEFAULT ' || p.expr END);
		COMMIT;
		CHECKPOINT;
		started := clock_timestamp();
		EXECUTE format('INSERT INTO %I SELECT FROM generate_series(1, %s)', tbl, n);
		GET DIAGNOSTICS got = ROW_COUNT;
		COMMIT;
		elapsed := clock_timestamp() - started;
		IF got IS DISTINCT FROM n THEN
			RAISE EXCEPTION 'bench: inserted % rows into %, not %', got, tbl, n;
		END IF;
		INSERT INTO bench_pk_result
		SELECT p.label, extract(epoch FROM elapsed) * 1000, pg_relation_size(i.indexrelid)
		FROM pg_index i
		WHERE i.indrelid = tbl::regclass AND i.indisprimary;
		COMMIT;
	END LOOP;
END
$$;

CREATE FUNCTION bench_mb(bytes bigint) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
	SELECT round(bytes / (1024.0 * 1024), 1)
$$;

-- 1000000 as 1M, 250000 as 250k.
CREATE FUNCTION bench_count(n bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE
		WHEN n % 1000000 = 0 THEN (n / 1000000) || 'M'
		WHEN n % 1000 = 0 THEN (n / 1000) || 'k'
		ELSE n::text
	END
$$;

CREATE FUNCTION bench_pk_report() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	lw int;
	line text;
	r record;
BEGIN
	SELECT greatest(max(length(p.label)), 11) + 2 INTO lw FROM bench_pk p;
	line := rpad('primary key', lw) || rpad('type', 11) || lpad('insert ms', 11)
		|| lpad('index MB', 11) || lpad('index size', 13);
	RETURN NEXT line;
	RETURN NEXT repeat('-', length(line));
	FOR r IN
		SELECT p.label, p.coltype, res.insert_ms, res.index_bytes
		FROM bench_pk p JOIN bench_pk_result res ON res.label = p.label
		ORDER BY p.ord
	LOOP
		RETURN NEXT rpad(r.label, lw) || rpad(r.coltype, 11)
			|| lpad(bench_num(r.insert_ms, 0), 11)
			|| lpad(bench_mb(r.index_bytes)::text, 11)
			|| lpad(pg_size_pretty(r.index_bytes), 13);
	END LOOP;
END
$$;

-- The index-size target lines, OK or MISSED; targets scale with n.
CREATE FUNCTION bench_pk_targets(n bigint) RETURNS SETOF text
LANGUAGE sql STABLE AS $$
	SELECT format('%s primary key of %s rows: %s MB (target <= %s MB) %s',
		p.label, bench_count(n), bench_mb(res.index_bytes), trim_scale(target),
		CASE WHEN bench_mb(res.index_bytes) <= target THEN 'OK' ELSE 'MISSED' END)
	FROM bench_pk p
		JOIN bench_pk_result res ON res.label = p.label,
		LATERAL (SELECT round(p.target_mb * n / 1000000, 1) AS target) t
	WHERE p.target_mb IS NOT NULL
	UNION ALL
	SELECT format('%s primary key of %s rows: %s MB, %s''s %s MB (target: no larger) %s',
		p.label, bench_count(n), bench_mb(res.index_bytes), p.size_ref,
		bench_mb(ref.index_bytes),
		CASE WHEN res.index_bytes <= ref.index_bytes THEN 'OK' ELSE 'MISSED' END)
	FROM bench_pk p
		JOIN bench_pk_result res ON res.label = p.label
		JOIN bench_pk_result ref ON ref.label = p.size_ref
	UNION ALL
	SELECT format('%s insert of %s rows / %s insert = %s (target <= %s) %s',
		p.label, bench_count(n), p.insert_ref, bench_num(ratio, 2), p.insert_ratio,
		CASE WHEN ratio <= p.insert_ratio THEN 'OK' ELSE 'MISSED' END)
	FROM bench_pk p
		JOIN bench_pk_result res ON res.label = p.label
		JOIN bench_pk_result ref ON ref.label = p.insert_ref,
		LATERAL (SELECT (res.insert_ms / ref.insert_ms)::numeric AS ratio) t
$$;

-------------------------------------------------------------------------------
-- Throughput of one backend
-------------------------------------------------------------------------------

-- expr is a whole query with two columns: how many ids it made, and how many
-- of the layout's time units their own times span, (max(id) >> shift) -
-- (min(id) >> shift) + 1 (NULL for a row source alone); %s is n.  The
-- wall-clock rate is n over the query's time; the id-time rate is n over the
-- span, which leaves out whatever the query spent before the first id and
-- after the last (a row source that materializes its rows first, say).
CREATE TABLE bench_rate (
	ord serial,
	label text PRIMARY KEY,
	expr text NOT NULL,
	n bigint NOT NULL,
	limit_per_s numeric,			-- the layout's cap, ids/s; NULL: none
	unit_ms int NOT NULL DEFAULT 1,	-- the layout's time unit
	target_share numeric,			-- of limit_per_s, by the wall clock; NULL: none
	min_version int,
	CHECK (target_share IS NULL OR limit_per_s IS NOT NULL)
);

CREATE TABLE bench_rate_timing (
	label text REFERENCES bench_rate (label),
	round int,
	ms double precision,
	units bigint
);

-- rounds timed runs of each candidate (after one warm-up), median reported.
CREATE PROCEDURE bench_rate_run(rounds int)
LANGUAGE plpgsql AS $$
DECLARE
	c record;
	started timestamptz;
	elapsed interval;
	got bigint;
	units bigint;
BEGIN
	FOR r IN 0..rounds LOOP
		FOR c IN SELECT * FROM bench_rate ORDER BY ord LOOP
			started := clock_timestamp();
			EXECUTE format(c.expr, c.n) INTO got, units;
			elapsed := clock_timestamp() - started;
			IF got IS DISTINCT FROM c.n THEN
				RAISE EXCEPTION 'bench: % gave % rows, not %', c.label, got, c.n;
			END IF;
			IF r > 0 THEN
				INSERT INTO bench_rate_timing
				VALUES (c.label, r, extract(epoch FROM elapsed) * 1000, units);
			END IF;
		END LOOP;
		COMMIT;
	END LOOP;
END
$$;

CREATE FUNCTION bench_rate_stats()
RETURNS TABLE (ord int, label text, n bigint, limit_per_s numeric, target_share numeric,
			   ms double precision, wall_share numeric, span_ms double precision,
			   span_share numeric)
LANGUAGE sql STABLE AS $$
	SELECT r.ord, r.label, r.n, r.limit_per_s, r.target_share, m.ms,
		(r.n / (m.ms / 1000.0) / r.limit_per_s)::numeric,
		m.units * r.unit_ms,
		(r.n / (m.units * r.unit_ms / 1000.0) / r.limit_per_s)::numeric
	FROM bench_rate r,
		LATERAL (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) AS ms,
					percentile_cont(0.5) WITHIN GROUP (ORDER BY t.units) AS units
				 FROM bench_rate_timing t WHERE t.label = r.label) m
	ORDER BY r.ord
$$;

-- x as an integer with thousands separators.
CREATE FUNCTION bench_int(x double precision) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(trim(to_char(round(x), 'FM999,999,999,999')), '-')
$$;

CREATE FUNCTION bench_rate_report() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
	lw int;
	line text;
	s record;
BEGIN
	SELECT greatest(max(length(r.label)), 5) + 2 INTO lw FROM bench_rate r;
	line := rpad('query', lw) || lpad('median ms', 10) || lpad('ids/s', 13)
		|| lpad('of cap', 8) || '   |' || lpad('ids span ms', 12) || lpad('ids/s', 13)
		|| lpad('of cap', 8);
	RETURN NEXT rpad('', lw) || lpad('-- by the wall clock --', 31) || '   |'
		|| lpad('-- by the ids'' own times --', 33);
	RETURN NEXT line;
	RETURN NEXT repeat('-', length(line));
	FOR s IN SELECT * FROM bench_rate_stats() LOOP
		RETURN NEXT rpad(s.label, lw) || lpad(bench_num(s.ms, 0), 10)
			|| lpad(bench_int(s.n / (s.ms / 1000.0)), 13)
			|| lpad(coalesce(bench_num(s.wall_share * 100, 1) || '%', '-'), 8)
			|| '   |' || lpad(bench_num(s.span_ms, 0), 12)
			|| lpad(bench_int(s.n / (s.span_ms / 1000.0)), 13)
			|| lpad(coalesce(bench_num(s.span_share * 100, 1) || '%', '-'), 8);
	END LOOP;
END
$$;

CREATE FUNCTION bench_rate_targets() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
	SELECT format('%s: %s ids/s by the wall clock = %s%% of the layout''s %s/s (target >= %s%%) %s; by the ids'' own times %s%%',
		s.label, bench_int(s.n / (s.ms / 1000.0)), bench_num(s.wall_share * 100, 1),
		bench_int(s.limit_per_s), trim_scale(s.target_share * 100),
		CASE WHEN s.wall_share >= s.target_share THEN 'OK' ELSE 'MISSED' END,
		bench_num(s.span_share * 100, 1))
	FROM bench_rate_stats() s
	WHERE s.target_share IS NOT NULL
	ORDER BY s.ord
$$;

-------------------------------------------------------------------------------
-- Candidates a server is too old for
-------------------------------------------------------------------------------

CREATE TABLE bench_skipped (
	what text NOT NULL,
	label text NOT NULL,
	min_version int NOT NULL
);

-- Remove the candidates whose min_version is above the server's (targets
-- naming them go with them), noting them in bench_skipped.
CREATE PROCEDURE bench_prune()
LANGUAGE plpgsql AS $$
DECLARE
	v int := current_setting('server_version_num')::int;
BEGIN
	WITH d AS (DELETE FROM bench_call WHERE min_version > v RETURNING label, min_version)
	INSERT INTO bench_skipped SELECT 'per-call', label, min_version FROM d;
	WITH d AS (DELETE FROM bench_pk WHERE min_version > v RETURNING label, min_version)
	INSERT INTO bench_skipped SELECT 'primary key', label, min_version FROM d;
	WITH d AS (DELETE FROM bench_rate WHERE min_version > v RETURNING label, min_version)
	INSERT INTO bench_skipped SELECT 'throughput', label, min_version FROM d;
END
$$;

-- One line naming what was skipped, if anything.
CREATE FUNCTION bench_skipped_report() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
	SELECT format('skipped on PostgreSQL %s: %s', split_part(current_setting('server_version'), ' ', 1),
		string_agg(format('%s %s (needs %s)', what, label,
			CASE WHEN min_version >= 100000 THEN (min_version / 10000)::text
				 ELSE min_version::text END), '; '))
	FROM bench_skipped
	HAVING count(*) > 0
$$;

-------------------------------------------------------------------------------
-- Chart data: tab-separated, for bench/chart.gp
-------------------------------------------------------------------------------

-- label, per-call ns (0 when below the baseline's noise), the figure as
-- printed, 1 for cosid's calls and 0 for the references.
CREATE FUNCTION bench_chart_calls(n bigint)
RETURNS TABLE (label text, bar double precision, shown text, cosid int)
LANGUAGE sql STABLE AS $$
	SELECT st.label, greatest(st.per_call_ns, 0), bench_num(st.per_call_ns, 0),
		CASE WHEN st.role = 'reference' THEN 0 ELSE 1 END
	FROM bench_call_stats(n) st JOIN bench_call c ON c.label = st.label
	WHERE c.chart
	ORDER BY st.role IS NOT DISTINCT FROM 'reference' DESC, st.ord
$$;

CREATE FUNCTION bench_chart_pk()
RETURNS TABLE (label text, mb numeric, shown text, cosid int)
LANGUAGE sql STABLE AS $$
	SELECT CASE WHEN p.label = p.coltype THEN p.label ELSE p.label || ' (' || p.coltype || ')' END, bench_mb(res.index_bytes),
		bench_mb(res.index_bytes)::text, CASE WHEN p.cosid THEN 1 ELSE 0 END
	FROM bench_pk p JOIN bench_pk_result res ON res.label = p.label
	ORDER BY p.cosid, p.ord
$$;
