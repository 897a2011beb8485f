// pgx v4 against cosid (TAP): ids from cosid_next defaults read as int64,
// ulid mapped to pgtype.UUID (read and written as [16]byte, pgtype.UUID and
// ULID text, in WHERE, in CopyFrom), gen_uuidv7() ids as the native uuid type,
// cosid_encode/cosid_decode/cosid_unpack and the _with forms with parameters.
// Connects with PGHOST, PGPORT and PGUSER, as a superuser, and makes its own
// database, cosid_pgx.  Built (GOPATH mode, Debian's pgx) and run by
// pgx_test.sh.
package main

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// UlidString is the 26-character ULID text of 16 bytes.
func UlidString(b [16]byte) string {
	out := make([]byte, 26)
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[i+8])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

// ParseUlid reads ULID text (either case) into its 16 bytes.
func ParseUlid(text string) ([16]byte, error) {
	var b [16]byte
	var hi, lo uint64
	if len(text) != 26 {
		return b, fmt.Errorf("not a ULID: %q", text)
	}
	for _, c := range strings.ToUpper(text) {
		d := strings.IndexRune(crockford, c)
		if d < 0 || hi>>59 != 0 {
			return b, fmt.Errorf("not a ULID: %q", text)
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	for i := 7; i >= 0; i-- {
		b[i], b[i+8] = byte(hi), byte(lo)
		hi >>= 8
		lo >>= 8
	}
	return b, nil
}

// RegisterUlid maps cosid's ulid (and ulid[]) to pgtype.UUID on this
// connection: binary results, [16]byte / pgtype.UUID parameters, CopyFrom.
func RegisterUlid(ctx context.Context, conn *pgx.Conn) error {
	var oid, arrayOid uint32
	err := conn.QueryRow(ctx, "SELECT 'ulid'::regtype::oid, 'ulid[]'::regtype::oid").Scan(&oid, &arrayOid)
	if err != nil {
		return err
	}
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.UUID{}, Name: "ulid", OID: oid})
	conn.ConnInfo().RegisterDataType(pgtype.DataType{Value: &pgtype.UUIDArray{}, Name: "_ulid", OID: arrayOid})
	return nil
}

var tests, failed int

func ok(cond bool, name string, diag ...interface{}) bool {
	tests++
	if cond {
		fmt.Printf("ok %d - %s\n", tests, name)
		return true
	}
	failed++
	fmt.Printf("not ok %d - %s\n", tests, name)
	for _, d := range diag {
		for _, line := range strings.Split(fmt.Sprint(d), "\n") {
			fmt.Printf("# %s\n", line)
		}
	}
	return false
}

func eq(got, expected interface{}, name string) bool {
	return ok(reflect.DeepEqual(got, expected), name,
		fmt.Sprintf("got:      %v", got), fmt.Sprintf("expected: %v", expected))
}

func noErr(err error, name string) bool {
	return ok(err == nil, name, err)
}

func bail(err error, what string) {
	ok(false, what, err)
	fmt.Printf("1..%d\n", tests)
	os.Exit(1)
}

type Row struct {
	ID   int64
	Ref  [16]byte
	Item string
}

const schema = `
SELECT cosid_define('order', '{"strategy": "snowflake"}');
CREATE TABLE orders (
    id   bigint PRIMARY KEY DEFAULT cosid_next('order'),
    ref  ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(),
    item text NOT NULL
);
SELECT cosid_define('ticket', '{"strategy": "snowflake", "codec": [{"radix": 62}, {"prefix": "T-"}]}');
CREATE TABLE events (
    id   uuid PRIMARY KEY DEFAULT gen_uuidv7(),
    ref  ulid NOT NULL DEFAULT gen_ulid(),
    name text NOT NULL
);`

func main() {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, "dbname=postgres")
	if err != nil {
		bail(err, "connect")
	}
	for _, sql := range []string{"DROP DATABASE IF EXISTS cosid_pgx", "CREATE DATABASE cosid_pgx"} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			bail(err, sql)
		}
	}
	admin.Close(ctx)

	conn, err := pgx.Connect(ctx, "dbname=cosid_pgx")
	if err != nil {
		bail(err, "connect to cosid_pgx")
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE EXTENSION cosid"); err != nil {
		bail(err, "CREATE EXTENSION cosid")
	}
	if _, err := conn.Exec(ctx, schema); err != nil {
		bail(err, "the schema")
	}

	// Before the registration: pgx knows no ulid; text is all it reads.
	var before [16]byte
	err = conn.QueryRow(ctx, "SELECT gen_ulid()").Scan(&before)
	ok(err != nil, "without RegisterUlid a ulid does not scan into [16]byte", err)
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"ref", "item"},
		pgx.CopyFromRows([][]interface{}{{before, "never"}}))
	ok(err != nil, "without RegisterUlid CopyFrom of a ulid column fails", err)

	if err := RegisterUlid(ctx, conn); err != nil {
		bail(err, "RegisterUlid")
	}
	ok(true, "RegisterUlid")

	// Ids from the defaults through RETURNING: int64 and [16]byte.
	var first Row
	first.Item = "tea"
	err = conn.QueryRow(ctx, "INSERT INTO orders (item) VALUES ($1) RETURNING id, ref", "tea").Scan(&first.ID, &first.Ref)
	noErr(err, "INSERT ... RETURNING id, ref")
	ok(first.ID > 1<<53, "the id is a SNOWFLAKE_MS id above 2^53", first.ID)
	var idText string
	conn.QueryRow(ctx, "SELECT id::text FROM orders WHERE ref = $1", first.Ref).Scan(&idText)
	eq(idText, fmt.Sprint(first.ID), "the int64 is the id exactly (its text from the server)")
	var refText string
	conn.QueryRow(ctx, "SELECT ref::text FROM orders WHERE id = $1", first.ID).Scan(&refText)
	eq(UlidString(first.Ref), refText, "the [16]byte is the ulid (UlidString gives the server's text)")

	inserted := []Row{first}
	batch := &pgx.Batch{}
	for i := 0; i < 20; i++ {
		batch.Queue("INSERT INTO orders (item) VALUES ($1) RETURNING id, ref", fmt.Sprintf("item %d", i))
	}
	results := conn.SendBatch(ctx, batch)
	for i := 0; i < 20; i++ {
		r := Row{Item: fmt.Sprintf("item %d", i)}
		if err := results.QueryRow().Scan(&r.ID, &r.Ref); err != nil {
			ok(false, "batch insert", err)
			break
		}
		inserted = append(inserted, r)
	}
	results.Close()
	increasing := true
	for i := 1; i < len(inserted); i++ {
		increasing = increasing && inserted[i].ID > inserted[i-1].ID &&
			UlidString(inserted[i].Ref) > UlidString(inserted[i-1].Ref)
	}
	ok(len(inserted) == 21 && increasing, "a batch of 20 inserts: ids and refs from the defaults, increasing")

	// ulid parameters in WHERE: [16]byte, pgtype.UUID, ULID text, a uuid.
	r := inserted[7]
	var id int64
	err = conn.QueryRow(ctx, "SELECT id FROM orders WHERE ref = $1", r.Ref).Scan(&id)
	eq([]interface{}{id, err}, []interface{}{r.ID, nil}, "WHERE ref = $1 with a [16]byte")
	id = 0
	err = conn.QueryRow(ctx, "SELECT id FROM orders WHERE ref = $1",
		pgtype.UUID{Bytes: r.Ref, Status: pgtype.Present}).Scan(&id)
	eq([]interface{}{id, err}, []interface{}{r.ID, nil}, "WHERE ref = $1 with a pgtype.UUID")
	id = 0
	err = conn.QueryRow(ctx, "SELECT id FROM orders WHERE ref = $1", UlidString(r.Ref)).Scan(&id)
	eq([]interface{}{id, err}, []interface{}{r.ID, nil}, "WHERE ref = $1 with ULID text (a string goes as text)")
	id = 0
	err = conn.QueryRow(ctx, "SELECT id FROM orders WHERE ref = $1::uuid", r.Ref).Scan(&id)
	eq([]interface{}{id, err}, []interface{}{r.ID, nil}, "WHERE ref = $1::uuid with a [16]byte")
	var one int64
	err = conn.QueryRow(ctx, "SELECT count(*) FROM orders WHERE ref = $1", [16]byte{}).Scan(&one)
	eq([]interface{}{one, err}, []interface{}{int64(0), nil}, "WHERE ref = $1 with a ulid of no row finds none")

	// ulid results as pgtype.UUID, as [16]byte from ref::uuid, as ulid[].
	var u pgtype.UUID
	var asUUID [16]byte
	err = conn.QueryRow(ctx, "SELECT ref, ref::uuid FROM orders WHERE id = $1", r.ID).Scan(&u, &asUUID)
	eq([]interface{}{u.Bytes, asUUID, err}, []interface{}{r.Ref, r.Ref, nil}, "a ulid scans into pgtype.UUID; ref::uuid is the same bytes")
	var refs [][16]byte
	err = conn.QueryRow(ctx, "SELECT array_agg(ref ORDER BY id) FROM orders").Scan(&refs)
	want := make([][16]byte, len(inserted))
	for i, row := range inserted {
		want[i] = row.Ref
	}
	eq([]interface{}{refs, err}, []interface{}{want, nil}, "a ulid[] scans into [][16]byte")
	var ids []int64
	err = conn.QueryRow(ctx, "SELECT array_agg(id ORDER BY id) FROM orders WHERE ref = ANY($1::uuid[])", want[3:8]).Scan(&ids)
	wantIds := []int64{}
	for _, row := range inserted[3:8] {
		wantIds = append(wantIds, row.ID)
	}
	eq([]interface{}{ids, err}, []interface{}{wantIds, nil}, "WHERE ref = ANY($1::uuid[]) with a [][16]byte")

	// A ulid written from Go: INSERT with a [16]byte, and CopyFrom.
	mine, _ := ParseUlid("01HTQW311N1KR5G0Y75M3EF00H")
	var mineID int64
	var back [16]byte
	err = conn.QueryRow(ctx, "INSERT INTO orders (ref, item) VALUES ($1, $2) RETURNING id, ref", mine, "mine").Scan(&mineID, &back)
	eq([]interface{}{back, err}, []interface{}{mine, nil}, "INSERT with a [16]byte ulid reads back the same")
	conn.QueryRow(ctx, "SELECT ref::text FROM orders WHERE id = $1", mineID).Scan(&refText)
	eq(refText, "01HTQW311N1KR5G0Y75M3EF00H", "the server's text of it is the ULID text it was parsed from")

	rows := [][]interface{}{}
	copied := map[[16]byte]string{}
	for i := 0; i < 100; i++ {
		var ref [16]byte
		ref[0], ref[15] = 1, byte(i)
		rows = append(rows, []interface{}{ref, fmt.Sprintf("copied %d", i)})
		copied[ref] = fmt.Sprintf("copied %d", i)
	}
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"ref", "item"}, pgx.CopyFromRows(rows))
	eq([]interface{}{n, err}, []interface{}{int64(100), nil}, "CopyFrom with a ulid column: 100 rows")
	got := map[[16]byte]string{}
	var copiedIDs []int64
	q, err := conn.Query(ctx, "SELECT id, ref, item FROM orders WHERE item LIKE 'copied %' ORDER BY id")
	if noErr(err, "read the copied rows") {
		for q.Next() {
			var row Row
			q.Scan(&row.ID, &row.Ref, &row.Item)
			got[row.Ref] = row.Item
			copiedIDs = append(copiedIDs, row.ID)
		}
		q.Close()
	}
	eq(got, copied, "the copied rows read back with their refs")
	ok(len(copiedIDs) == 100 && copiedIDs[0] > inserted[len(inserted)-1].ID, "CopyFrom filled id from its default")

	// gen_uuidv7() ids: the native uuid type.
	var evs [][16]byte
	var evRefs [][16]byte
	for i := 0; i < 5; i++ {
		var ev pgtype.UUID
		var ref [16]byte
		if err := conn.QueryRow(ctx, "INSERT INTO events (name) VALUES ($1) RETURNING id, ref", "e").Scan(&ev, &ref); err != nil {
			ok(false, "INSERT INTO events", err)
			break
		}
		evs = append(evs, ev.Bytes)
		evRefs = append(evRefs, ref)
	}
	v7 := len(evs) == 5
	for i, ev := range evs {
		v7 = v7 && ev[6]>>4 == 7 && ev[8]>>6 == 2 && (i == 0 || string(ev[:]) > string(evs[i-1][:]))
	}
	ok(v7, "gen_uuidv7() ids scan into pgtype.UUID: version 7, variant 10, increasing", evs)
	var name string
	err = conn.QueryRow(ctx, "SELECT name FROM events WHERE id = $1", evs[2]).Scan(&name)
	eq([]interface{}{name, err}, []interface{}{"e", nil}, "WHERE id = $1 with a uuid [16]byte")
	var at time.Time
	err = conn.QueryRow(ctx, "SELECT uuidv7_time($1)", evs[0]).Scan(&at)
	ok(err == nil && time.Since(at) < time.Minute && time.Since(at) > -time.Minute, "uuidv7_time($1) is now", at, err)
	var hex string
	conn.QueryRow(ctx, "SELECT id::text FROM events WHERE ref = $1", evRefs[1]).Scan(&hex)
	eq(hex, fmt.Sprintf("%x-%x-%x-%x-%x", evs[1][0:4], evs[1][4:6], evs[1][6:8], evs[1][8:10], evs[1][10:]), "gen_ulid() refs find their events")

	// encode, decode, unpack with parameters ($1, $2 of no cast).
	var ticket int64
	conn.QueryRow(ctx, "SELECT cosid_next('ticket')").Scan(&ticket)
	var code string
	err = conn.QueryRow(ctx, "SELECT cosid_encode($1, $2)", "ticket", ticket).Scan(&code)
	ok(err == nil && strings.HasPrefix(code, "T-") && len(code) > 4, "cosid_encode($1, $2) through the generator's codec", code, err)
	var decoded int64
	err = conn.QueryRow(ctx, "SELECT cosid_decode($1, $2)", "ticket", code).Scan(&decoded)
	eq([]interface{}{decoded, err}, []interface{}{ticket, nil}, "cosid_decode($1, $2) gives the id back")
	codec := `[{"radix": 62}, {"prefix": "T-"}]`
	var with string
	err = conn.QueryRow(ctx, "SELECT cosid_encode_with($1, $2)", ticket, codec).Scan(&with)
	eq([]interface{}{with, err}, []interface{}{code, nil}, "cosid_encode_with($1, $2) with the same codec list")
	decoded = 0
	err = conn.QueryRow(ctx, "SELECT cosid_decode_with($1, $2)", code, codec).Scan(&decoded)
	eq([]interface{}{decoded, err}, []interface{}{ticket, nil}, "cosid_decode_with($1, $2)")
	err = conn.QueryRow(ctx, "SELECT cosid_encode_with($1, $2)", int64(3844), `[{"radix": {"radix": 62}}]`).Scan(&with)
	eq([]interface{}{with, err}, []interface{}{"100", nil}, "cosid_encode_with(3844, base 62) is 100")
	var when time.Time
	var node int32
	var seq int64
	err = conn.QueryRow(ctx, "SELECT time, node, seq FROM cosid_unpack($1, $2)", "order", first.ID).Scan(&when, &node, &seq)
	ok(err == nil && time.Since(when) < time.Minute && time.Since(when) > -time.Minute, "cosid_unpack($1, $2): its time is now", when, err)
	var when2 time.Time
	var node2 int32
	var seq2 int64
	err = conn.QueryRow(ctx, "SELECT time, node, seq FROM cosid_unpack($1, $2)", "order", fmt.Sprint(first.ID)).Scan(&when2, &node2, &seq2)
	eq([]interface{}{when2, node2, seq2, err}, []interface{}{when, node, seq, nil}, "cosid_unpack($1, $2) with the id as decimal text")
	var tWhen, tWhen2 time.Time
	conn.QueryRow(ctx, "SELECT time FROM cosid_unpack($1, $2)", "ticket", ticket).Scan(&tWhen)
	err = conn.QueryRow(ctx, "SELECT time FROM cosid_unpack_text($1, $2)", "ticket", code).Scan(&tWhen2)
	ok(err == nil && tWhen.Equal(tWhen2) && !tWhen.IsZero(), "cosid_unpack_text($1, $2) unpacks the code as cosid_unpack the id", tWhen, tWhen2, err)
	code = ""
	err = conn.QueryRow(ctx, "SELECT cosid_encode($1, $2)", pgx.QuerySimpleProtocol(true), "ticket", ticket).Scan(&code)
	eq([]interface{}{code, err}, []interface{}{with2(conn, ctx, ticket, codec), nil}, "cosid_encode($1, $2) in the simple protocol (literals)")

	fmt.Printf("1..%d\n", tests)
	if failed > 0 {
		os.Exit(1)
	}
}

func with2(conn *pgx.Conn, ctx context.Context, id int64, codec string) string {
	var s string
	conn.QueryRow(ctx, "SELECT cosid_encode_with($1, $2)", id, codec).Scan(&s)
	return s
}
