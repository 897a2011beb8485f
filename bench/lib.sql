-- bench/lib.sql: the tables and functions bench/run.sh drives.  The
-- candidates themselves are in bench/candidates.sql.

-------------------------------------------------------------------------------
-- Per-call cost
-------------------------------------------------------------------------------

CREATE TABLE bench_call (
	ord serial,
	label text PRIMARY KEY,
	expr text NOT NULL,
	role text CHECK (role IN ('baseline', 'reference')),
	target_ratio numeric CHECK (target_ratio > 0),
	target_ref text REFERENCES bench_call (label),
	CHECK ((target_ratio IS NULL) = (target_ref IS NULL))
);
CREATE UNIQUE INDEX bench_call_one_baseline ON bench_call (role) WHERE role = 'baseline';

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
		SELECT c.label, c.target_ratio, c.target_ref,
			st.per_call_ns AS ns, rst.per_call_ns AS ref_ns
		FROM bench_call c
			JOIN bench_call_stats(n) st ON st.label = c.label
			JOIN bench_call_stats(n) rst ON rst.label = c.target_ref
		WHERE c.target_ratio IS NOT NULL
		ORDER BY c.ord
	LOOP
		ratio := CASE WHEN t.ref_ns > 0 THEN t.ns / t.ref_ns END;
		RETURN NEXT format('%s per-call / %s per-call = %s (target <= %s) %s',
			t.label, t.target_ref, bench_num(ratio, 2), t.target_ratio,
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
	insert_ratio numeric CHECK (insert_ratio > 0),
	insert_ref text REFERENCES bench_pk (label),
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
	SELECT format('%s insert of %s rows / %s insert = %s (target <= %s) %s',
		p.label, bench_count(n), p.insert_ref, bench_num(ratio, 2), p.insert_ratio,
		CASE WHEN ratio <= p.insert_ratio THEN 'OK' ELSE 'MISSED' END)
	FROM bench_pk p
		JOIN bench_pk_result res ON res.label = p.label
		JOIN bench_pk_result ref ON ref.label = p.insert_ref,
		LATERAL (SELECT (res.insert_ms / ref.insert_ms)::numeric AS ratio) t
$$;

-------------------------------------------------------------------------------
-- Throughput of bulk calls
-------------------------------------------------------------------------------

CREATE TABLE bench_rate (
	ord serial,
	label text PRIMARY KEY,
	expr text NOT NULL,				-- a query counting n ids, %s is n
	n bigint NOT NULL,
	limit_per_s numeric NOT NULL,
	target_share numeric			-- NULL: reported, no target
);

CREATE TABLE bench_rate_timing (
	label text REFERENCES bench_rate (label),
	round int,
	ms double precision
);

-- rounds timed runs of each candidate (after one warm-up), median reported.
CREATE PROCEDURE bench_rate_run(rounds int)
LANGUAGE plpgsql AS $$
DECLARE
	c record;
	started timestamptz;
	got bigint;
BEGIN
	FOR r IN 0..rounds LOOP
		FOR c IN SELECT * FROM bench_rate ORDER BY ord LOOP
			started := clock_timestamp();
			EXECUTE format(c.expr, c.n) INTO got;
			IF got IS DISTINCT FROM c.n THEN
				RAISE EXCEPTION 'bench: % gave % rows, not %', c.label, got, c.n;
			END IF;
			IF r > 0 THEN
				INSERT INTO bench_rate_timing
				VALUES (c.label, r, extract(epoch FROM clock_timestamp() - started) * 1000);
			END IF;
		END LOOP;
		COMMIT;
	END LOOP;
END
$$;

CREATE FUNCTION bench_rate_report() RETURNS SETOF text
LANGUAGE sql STABLE AS $$
	SELECT format('%s: %s ids in %s ms (median) = %s ids/s, %s%% of the layout''s %s/s%s',
		r.label, r.n, bench_num(m.ms, 0), round(r.n / (m.ms / 1000.0)),
		bench_num(share * 100, 1), r.limit_per_s,
		CASE WHEN r.target_share IS NULL THEN ''
			 WHEN share >= r.target_share THEN format(' (target >= %s%%) OK', r.target_share * 100)
			 ELSE format(' (target >= %s%%) MISSED', r.target_share * 100) END)
	FROM bench_rate r,
		LATERAL (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY t.ms) AS ms
				 FROM bench_rate_timing t WHERE t.label = r.label) m,
		LATERAL (SELECT (r.n / (m.ms / 1000.0) / r.limit_per_s)::numeric AS share) s
	ORDER BY r.ord
$$;
