// tokio-postgres against cosid (TAP): ids from cosid_next defaults read as
// i64, cosid's ulid read and written through Ulid (a uuid::Uuid that accepts
// the ulid type: parameters, results, WHERE, ulid[], binary COPY), gen_uuidv7()
// ids as uuid::Uuid, cosid_encode/cosid_decode/cosid_unpack and the _with forms
// with parameters.  Connects with PGHOST, PGPORT and PGUSER, as a superuser,
// and makes its own database, cosid_tokio.  Built and run by
// tokio_postgres_test.sh.
use std::error::Error;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use bytes::BytesMut;
use futures_util::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use tokio_postgres::{Client, NoTls};
use uuid::Uuid;

/// A `ulid` value: its 16 bytes as a `uuid::Uuid`. Reads and writes cosid's
/// `ulid` (in binary, the 16 bytes) and `uuid`; `ulid[]` as `Vec<Ulid>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ulid(pub Uuid);

impl<'a> FromSql<'a> for Ulid {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Ulid(Uuid::from_slice(raw)?))
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "ulid" || *ty == Type::UUID
    }
}

impl ToSql for Ulid {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        ty.name() == "ulid" || *ty == Type::UUID
    }

    to_sql_checked!();
}

impl From<Uuid> for Ulid {
    fn from(u: Uuid) -> Self {
        Ulid(u)
    }
}

impl From<Ulid> for Uuid {
    fn from(u: Ulid) -> Self {
        u.0
    }
}

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The 26-character ULID text.
impl fmt::Display for Ulid {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let n = self.0.as_u128();
        let text: String = (0..26).map(|i| CROCKFORD[(n >> (125 - 5 * i) & 31) as usize] as char).collect();
        f.write_str(&text)
    }
}

impl FromStr for Ulid {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut n: u128 = 0;
        for c in text.to_ascii_uppercase().bytes() {
            let d = CROCKFORD.iter().position(|&x| x == c);
            match d {
                Some(d) if text.len() == 26 && n >> 123 == 0 => n = n << 5 | d as u128,
                _ => return Err(format!("not a ULID: {:?}", text)),
            }
        }
        if text.len() != 26 {
            return Err(format!("not a ULID: {:?}", text));
        }
        Ok(Ulid(Uuid::from_u128(n)))
    }
}

struct Tap {
    tests: u32,
    failed: u32,
}

impl Tap {
    fn ok(&mut self, cond: bool, name: &str, diag: &str) -> bool {
        self.tests += 1;
        if cond {
            println!("ok {} - {}", self.tests, name);
        } else {
            self.failed += 1;
            println!("not ok {} - {}", self.tests, name);
            for line in diag.lines() {
                println!("# {}", line);
            }
        }
        cond
    }

    fn eq<T: PartialEq + fmt::Debug>(&mut self, got: T, expected: T, name: &str) -> bool {
        let diag = format!("got:      {:?}\nexpected: {:?}", got, expected);
        self.ok(got == expected, name, &diag)
    }

    fn done(&self) -> ! {
        println!("1..{}", self.tests);
        std::process::exit(if self.failed > 0 { 1 } else { 0 })
    }
}

type Res<T> = Result<T, Box<dyn Error>>;

async fn connect(dbname: &str) -> Res<Client> {
    let mut config = tokio_postgres::Config::new();
    config.host(&std::env::var("PGHOST").unwrap_or_else(|_| "localhost".into()));
    config.port(std::env::var("PGPORT").unwrap_or_else(|_| "5432".into()).parse()?);
    config.user(&std::env::var("PGUSER").unwrap_or_else(|_| "postgres".into()));
    config.dbname(dbname);
    let (client, connection) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("connection: {}", e);
        }
    });
    Ok(client)
}

const SCHEMA: &str = r#"
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
);"#;

fn near_now(t: SystemTime) -> bool {
    let now = SystemTime::now();
    let d = now.duration_since(t).or_else(|_| t.duration_since(now)).unwrap_or(Duration::MAX);
    d < Duration::from_secs(60)
}

async fn run(t: &mut Tap) -> Res<()> {
    let admin = connect("postgres").await?;
    admin.batch_execute("DROP DATABASE IF EXISTS cosid_tokio").await?;
    admin.batch_execute("CREATE DATABASE cosid_tokio").await?;
    let client = connect("cosid_tokio").await?;
    client.batch_execute("CREATE EXTENSION cosid").await?;
    client.batch_execute(SCHEMA).await?;

    // Without Ulid: no Rust type accepts a ulid.
    let row = client.query_one("SELECT gen_ulid()", &[]).await?;
    let failures = [
        row.try_get::<_, String>(0).is_err(),
        row.try_get::<_, Uuid>(0).is_err(),
        row.try_get::<_, Vec<u8>>(0).is_err(),
    ];
    t.eq(failures, [true; 3], "without Ulid a ulid does not read as String, Uuid or Vec<u8>");

    // Ids from the defaults through RETURNING: i64 and Ulid.
    let row = client.query_one("INSERT INTO orders (item) VALUES ($1) RETURNING id, ref", &[&"tea"]).await?;
    let first: (i64, Ulid) = (row.get("id"), row.get("ref"));
    t.ok(first.0 > 1 << 53, "the id is a SNOWFLAKE_MS id above 2^53", &first.0.to_string());
    let row = client.query_one("SELECT id::text, ref::text FROM orders WHERE id = $1", &[&first.0]).await?;
    t.eq(row.get::<_, String>(0), first.0.to_string(), "the i64 is the id exactly (its text from the server)");
    t.eq(row.get::<_, String>(1), first.1.to_string(), "the Ulid is the ulid (Display gives the server's text)");

    let mut inserted = vec![(first.0, first.1, "tea".to_string())];
    let insert = client.prepare("INSERT INTO orders (item) VALUES ($1) RETURNING id, ref").await?;
    for i in 0..20 {
        let item = format!("item {}", i);
        let row = client.query_one(&insert, &[&item]).await?;
        inserted.push((row.get(0), row.get(1), item));
    }
    let increasing = inserted.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 > w[0].1);
    t.ok(increasing, "20 more inserts: ids and refs from the defaults, increasing", "");

    // ulid parameters in WHERE: a Ulid, a uuid::Uuid through it, ULID text.
    let (id, r, _) = inserted[7].clone();
    let row = client.query_one("SELECT id FROM orders WHERE ref = $1", &[&r]).await?;
    t.eq(row.get::<_, i64>(0), id, "WHERE ref = $1 with a Ulid");
    let u: Uuid = r.into();
    let row = client.query_one("SELECT id FROM orders WHERE ref = $1", &[&Ulid::from(u)]).await?;
    t.eq(row.get::<_, i64>(0), id, "WHERE ref = $1 with a uuid::Uuid as Ulid::from(u)");
    let row = client.query_one("SELECT id FROM orders WHERE ref = $1::uuid", &[&u]).await?;
    t.eq(row.get::<_, i64>(0), id, "WHERE ref = $1::uuid with a uuid::Uuid");
    let text = r.to_string();
    let row = client.query_one("SELECT id FROM orders WHERE ref = $1::text::ulid", &[&text]).await?;
    t.eq(row.get::<_, i64>(0), id, "WHERE ref = $1::text::ulid with ULID text");
    let rows = client.query("SELECT id FROM orders WHERE ref = $1", &[&Ulid(Uuid::nil())]).await?;
    t.eq(rows.len(), 0, "WHERE ref = $1 with a ulid of no row finds none");

    // ulid results as uuid::Uuid, ulid[] both ways.
    let row = client.query_one("SELECT ref, ref::uuid FROM orders WHERE id = $1", &[&id]).await?;
    let (as_ulid, as_uuid): (Ulid, Uuid) = (row.get(0), row.get(1));
    t.eq((Uuid::from(as_ulid), as_uuid), (u, u), "a ulid read as Ulid gives the uuid::Uuid of ref::uuid");
    let row = client.query_one("SELECT array_agg(ref ORDER BY id) FROM orders", &[]).await?;
    let refs: Vec<Ulid> = row.get(0);
    t.eq(refs, inserted.iter().map(|r| r.1).collect::<Vec<_>>(), "a ulid[] reads as Vec<Ulid>");
    let some: Vec<Ulid> = inserted[3..8].iter().map(|r| r.1).collect();
    let row = client.query_one("SELECT array_agg(id ORDER BY id) FROM orders WHERE ref = ANY($1)", &[&some]).await?;
    let ids: Vec<i64> = row.get(0);
    t.eq(ids, inserted[3..8].iter().map(|r| r.0).collect::<Vec<_>>(), "WHERE ref = ANY($1) with a Vec<Ulid> (a ulid[])");

    // A ulid written from Rust: INSERT, and binary COPY.
    let mine: Ulid = "01HTQW311N1KR5G0Y75M3EF00H".parse()?;
    let row = client.query_one("INSERT INTO orders (ref, item) VALUES ($1, $2) RETURNING id, ref, ref::text", &[&mine, &"mine"]).await?;
    t.eq(row.get::<_, Ulid>(1), mine, "INSERT with a Ulid reads back the same");
    t.eq(row.get::<_, String>(2), "01HTQW311N1KR5G0Y75M3EF00H".to_string(), "the server's text of it is the text it was parsed from");

    let ulid_type = client.prepare("SELECT $1::ulid").await?.params()[0].clone();
    let sink = client.copy_in("COPY orders (ref, item) FROM STDIN (FORMAT BINARY)").await?;
    let writer = BinaryCopyInWriter::new(sink, &[ulid_type, Type::TEXT]);
    pin_mut!(writer);
    let mut copied = Vec::new();
    for i in 0..100u128 {
        let row = (Ulid(Uuid::from_u128(1 << 120 | i)), format!("copied {}", i));
        writer.as_mut().write(&[&row.0, &row.1]).await?;
        copied.push(row);
    }
    let n = writer.finish().await?;
    t.eq(n, 100, "binary COPY with a ulid column: 100 rows");
    let rows = client.query("SELECT id, ref, item FROM orders WHERE item LIKE 'copied %' ORDER BY ref", &[]).await?;
    let got: Vec<(Ulid, String)> = rows.iter().map(|r| (r.get(1), r.get(2))).collect();
    t.eq(got, copied, "the copied rows read back with their refs");
    let last = inserted.last().unwrap().0;
    t.ok(rows.len() == 100 && rows.iter().all(|r| r.get::<_, i64>(0) > last), "COPY filled id from its default", "");

    // gen_uuidv7() ids: uuid::Uuid.
    let mut events: Vec<(Uuid, Ulid)> = Vec::new();
    for _ in 0..5 {
        let row = client.query_one("INSERT INTO events (name) VALUES ($1) RETURNING id, ref", &[&"e"]).await?;
        events.push((row.get(0), row.get(1)));
    }
    let v7 = events.iter().all(|e| e.0.get_version_num() == 7 && e.0.as_bytes()[8] >> 6 == 2)
        && events.windows(2).all(|w| w[1].0 > w[0].0);
    t.ok(v7, "gen_uuidv7() ids read as uuid::Uuid: version 7, variant 10, increasing", &format!("{:?}", events));
    let row = client.query_one("SELECT id FROM events WHERE ref = $1", &[&events[2].1]).await?;
    t.eq(row.get::<_, Uuid>(0), events[2].0, "WHERE ref = $1 with a gen_ulid() Ulid finds its event");
    let row = client.query_one("SELECT name, uuidv7_time($1) FROM events WHERE id = $1", &[&events[1].0]).await?;
    let at: SystemTime = row.get(1);
    t.ok(row.get::<_, &str>(0) == "e" && near_now(at), "WHERE id = $1 with a uuid::Uuid; uuidv7_time($1) is now", &format!("{:?}", at));

    // encode, decode, unpack with parameters ($1, $2 of no cast).
    let ticket: i64 = client.query_one("SELECT cosid_next('ticket')", &[]).await?.get(0);
    let code: String = client.query_one("SELECT cosid_encode($1, $2)", &[&"ticket", &ticket]).await?.get(0);
    t.ok(code.starts_with("T-") && code.len() > 4, "cosid_encode($1, $2) through the generator's codec", &code);
    let decoded: i64 = client.query_one("SELECT cosid_decode($1, $2)", &[&"ticket", &code]).await?.get(0);
    t.eq(decoded, ticket, "cosid_decode($1, $2) gives the id back");
    let codec = r#"[{"radix": 62}, {"prefix": "T-"}]"#;
    let with: String = client.query_one("SELECT cosid_encode_with($1, $2::text::jsonb)", &[&ticket, &codec]).await?.get(0);
    t.eq(&with, &code, "cosid_encode_with($1, $2) with the same codec list");
    let decoded: i64 = client.query_one("SELECT cosid_decode_with($1, $2::text::jsonb)", &[&code, &codec]).await?.get(0);
    t.eq(decoded, ticket, "cosid_decode_with($1, $2)");
    let hundred: String = client
        .query_one("SELECT cosid_encode_with($1, $2::text::jsonb)", &[&3844i64, &r#"[{"radix": {"radix": 62}}]"#])
        .await?
        .get(0);
    t.eq(hundred.as_str(), "100", "cosid_encode_with(3844, base 62) is 100");
    let row = client.query_one("SELECT time, node, seq FROM cosid_unpack($1, $2)", &[&"order", &first.0]).await?;
    let (when, node, seq): (SystemTime, i32, i64) = (row.get(0), row.get(1), row.get(2));
    t.ok(near_now(when), "cosid_unpack($1, $2): its time is now", &format!("{:?} {} {}", when, node, seq));
    let row = client.query_one("SELECT time FROM cosid_unpack($1, $2)", &[&"ticket", &ticket]).await?;
    let row2 = client.query_one("SELECT time FROM cosid_unpack_text($1, $2)", &[&"ticket", &code]).await?;
    t.eq(row2.get::<_, SystemTime>(0), row.get::<_, SystemTime>(0), "cosid_unpack_text($1, $2) unpacks the code as cosid_unpack the id");
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut t = Tap { tests: 0, failed: 0 };
    if let Err(e) = run(&mut t).await {
        t.ok(false, "no error", &e.to_string());
    }
    t.done();
}
