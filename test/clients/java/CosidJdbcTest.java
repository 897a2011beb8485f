// pgjdbc against cosid (TAP): generated keys from cosid defaults, batches,
// a ulid column read as a java.util.UUID, UUID and ULID-text parameters, ulid[]
// arrays.  Connects with PGHOST, PGPORT and PGUSER (TCP), as a superuser, and
// makes its own database, cosid_jdbc.  Run by jdbc_test.sh.
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import org.postgresql.util.PGobject;

public class CosidJdbcTest {
    /** ULID text and java.util.UUID: the same 16 bytes (cosid's ulid is byte-identical to uuid). */
    static final class Ulid {
        private static final String CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

        static UUID toUuid(String text) {
            long hi = 0, lo = 0;
            for (char c : text.toUpperCase().toCharArray()) {
                int d = CROCKFORD.indexOf(c);
                if (text.length() != 26 || d < 0 || (hi >>> 59) != 0)
                    throw new IllegalArgumentException("not a ULID: " + text);
                hi = (hi << 5) | (lo >>> 59);
                lo = (lo << 5) | d;
            }
            return new UUID(hi, lo);
        }

        static String toText(UUID uuid) {
            long hi = uuid.getMostSignificantBits(), lo = uuid.getLeastSignificantBits();
            char[] out = new char[26];
            for (int i = 25; i >= 0; i--) {
                out[i] = CROCKFORD.charAt((int) (lo & 31));
                lo = (lo >>> 5) | (hi << 59);
                hi >>>= 5;
            }
            return new String(out);
        }
    }

    record Row(long id, String ref, String item) { }

    static int tests = 0, failed = 0;

    static boolean ok(boolean cond, String name, Object diag) {
        tests++;
        System.out.println((cond ? "ok " : "not ok ") + tests + " - " + name);
        if (!cond) {
            failed++;
            if (diag != null)
                for (String line : String.valueOf(diag).split("\n"))
                    System.out.println("# " + line);
        }
        return cond;
    }

    static boolean eq(Object got, Object expected, String name) {
        return ok(Objects.equals(got, expected), name, "got:      " + got + "\nexpected: " + expected);
    }

    interface Check { Object get() throws Exception; }

    /** eq on check.get(); an exception fails this test only. */
    static boolean eqOf(Check check, Object expected, String name) {
        Object got;
        try {
            got = check.get();
        } catch (Exception e) {
            return ok(false, name, e);
        }
        return eq(got, expected, name);
    }

    static String url(String db, String options) {
        String host = System.getenv().getOrDefault("PGHOST", "127.0.0.1");
        String port = System.getenv().getOrDefault("PGPORT", "5432");
        String user = System.getenv().getOrDefault("PGUSER", "postgres");
        return "jdbc:postgresql://" + host + ":" + port + "/" + db + "?user=" + user + options;
    }

    static List<Row> rows(Connection conn, String sql) throws SQLException {
        List<Row> out = new ArrayList<>();
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next())
                out.add(new Row(rs.getLong(1), rs.getString(2), rs.getString(3)));
        }
        return out;
    }

    interface Binder<T> { void bind(PreparedStatement ps, T value) throws SQLException; }

    /** For each value: the id of the row whose ref equals it, bound as binder says. */
    static <T> List<Long> idsWhereRef(Connection conn, List<T> values, Binder<T> binder) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = conn.prepareStatement("SELECT id FROM orders WHERE ref = ?")) {
            for (T value : values) {
                binder.bind(ps, value);
                try (ResultSet rs = ps.executeQuery()) {
                    ids.add(rs.next() ? rs.getLong(1) : null);
                }
            }
        }
        return ids;
    }

    static boolean increasing(List<Row> rows) {
        for (int i = 1; i < rows.size(); i++)
            if (rows.get(i - 1).id() >= rows.get(i).id() || rows.get(i - 1).ref().compareTo(rows.get(i).ref()) >= 0)
                return false;
        return true;
    }

    static void run() throws Exception {
        try (Connection admin = DriverManager.getConnection(url("postgres", ""));
             Statement st = admin.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS cosid_jdbc");
            st.execute("CREATE DATABASE cosid_jdbc");
        }
        Connection conn = DriverManager.getConnection(url("cosid_jdbc", ""));
        try (Statement st = conn.createStatement()) {
            st.execute("CREATE EXTENSION cosid");
            st.execute("SELECT cosid_define('order', '{\"strategy\": \"snowflake\"}')");
            st.execute("CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT cosid_next('order'), "
                    + "ref ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(), item text NOT NULL)");
        }
        List<Row> inserted = new ArrayList<>();

        // generated keys: the columns named, or RETURN_GENERATED_KEYS (all columns)
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO orders (item) VALUES (?)",
                new String[] {"id", "ref"})) {
            ps.setString(1, "tea");
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                keys.next();
                inserted.add(new Row(keys.getLong("id"), keys.getString("ref"), "tea"));
            }
        }
        Row first = inserted.get(0);
        ok(first.id() > (1L << 53) && first.ref().length() == 26,
                "generated keys: id (a long above 2^53) and ref (ULID text)", first);
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO orders (item) VALUES (?)",
                Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, "cake");
            ps.executeUpdate();
            try (ResultSet keys = ps.getGeneratedKeys()) {
                keys.next();
                inserted.add(new Row(keys.getLong("id"), keys.getString("ref"), keys.getString("item")));
            }
        }
        eq(inserted.get(1).item(), "cake", "RETURN_GENERATED_KEYS: every column of the new row");

        // batches, with and without reWriteBatchedInserts
        for (String options : new String[] {"", "&reWriteBatchedInserts=true"}) {
            try (Connection bc = DriverManager.getConnection(url("cosid_jdbc", options));
                 PreparedStatement ps = bc.prepareStatement("INSERT INTO orders (item) VALUES (?)",
                         new String[] {"id", "ref"})) {
                List<String> items = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    items.add("batch" + options + "-" + i);
                    ps.setString(1, items.get(i));
                    ps.addBatch();
                }
                int[] counts = ps.executeBatch();
                List<Row> batch = new ArrayList<>();
                try (ResultSet keys = ps.getGeneratedKeys()) {
                    for (int i = 0; keys.next(); i++)
                        batch.add(new Row(keys.getLong("id"), keys.getString("ref"), items.get(i)));
                }
                String name = "executeBatch" + (options.isEmpty() ? "" : " (reWriteBatchedInserts)");
                ok(counts.length == 50 && Arrays.stream(counts).allMatch(c -> c == 1 || c == Statement.SUCCESS_NO_INFO),
                        name + ": 50 rows inserted", Arrays.toString(counts));
                ok(batch.size() == 50 && increasing(batch), name + ": 50 generated ids and refs, increasing", batch);
                inserted.addAll(batch);
            }
        }
        ok(increasing(inserted), "all 102 ids and refs increasing, in insertion order", null);
        eq(rows(conn, "SELECT id, ref::text, item FROM orders ORDER BY id"), inserted,
                "every row read back equals its generated keys");

        // a ulid as a java.util.UUID
        List<String> refs = inserted.stream().map(Row::ref).toList();
        List<UUID> uuids = new ArrayList<>(), fromText = new ArrayList<>();
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT ref::uuid, ref FROM orders ORDER BY id")) {
            while (rs.next()) {
                uuids.add(rs.getObject(1, UUID.class));
                fromText.add(Ulid.toUuid(rs.getString(2)));
            }
        }
        eq(uuids, fromText, "SELECT ref::uuid, getObject(1, UUID.class): every ref, as Ulid.toUuid(its text) gives");
        eq(uuids.stream().map(Ulid::toText).toList(), refs, "Ulid.toText(uuid) gives the ULID text back");
        List<String> refused = new ArrayList<>();
        for (String bad : new String[] {"80000000000000000000000000", "01HTQW311N1KR5G0Y75M3EF0UH", "01HTQW311N"}) {
            try {
                Ulid.toUuid(bad);
            } catch (IllegalArgumentException e) {
                refused.add(bad);
            }
        }
        ok(refused.size() == 3 && Ulid.toUuid("7zzzzzzzzzzzzzzzzzzzzzzzzz").equals(new UUID(-1L, -1L)),
                "Ulid.toUuid: case-insensitive, refuses overflow, a U and a short text", refused);
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT ref FROM orders ORDER BY id LIMIT 1")) {
            rs.next();
            Object plain = rs.getObject(1);
            ok(plain instanceof PGobject p && p.getType().equals("ulid") && p.getValue().equals(refs.get(0)),
                    "getObject on a ulid column: a PGobject of type ulid holding the ULID text", plain);
            Object asUuid;
            try {
                asUuid = rs.getObject(1, UUID.class);
            } catch (ClassCastException e) {
                asUuid = e;
            }
            ok(asUuid instanceof ClassCastException,
                    "getObject(ulid column, UUID.class) is a ClassCastException in this pgjdbc: select ref::uuid",
                    asUuid);
        }

        // parameters: setObject(UUID), ULID text as Types.OTHER, a PGobject, setString
        List<Long> ids = inserted.stream().map(Row::id).toList();
        eqOf(() -> idsWhereRef(conn, uuids, (ps, uuid) -> ps.setObject(1, uuid)),
                ids, "WHERE ref = ? with setObject(UUID) finds every row");
        eqOf(() -> idsWhereRef(conn, refs, (ps, text) -> ps.setObject(1, text, Types.OTHER)),
                ids, "WHERE ref = ? with setObject(ULID text, Types.OTHER) finds every row");
        eqOf(() -> idsWhereRef(conn, refs, (ps, text) -> {
            PGobject o = new PGobject();
            o.setType("ulid");
            o.setValue(text);
            ps.setObject(1, o);
        }), ids, "WHERE ref = ? with a PGobject of type ulid finds every row");
        eqOf(() -> idsWhereRef(conn, refs, (ps, text) -> ps.setString(1, text)),
                ids, "WHERE ref = ? with setString(ULID text), a varchar, finds every row");
        eqOf(() -> {
            try (Connection unspecified = DriverManager.getConnection(url("cosid_jdbc", "&stringtype=unspecified"))) {
                return idsWhereRef(unspecified, refs, (ps, text) -> ps.setString(1, text));
            }
        }, ids, "stringtype=unspecified: WHERE ref = ? with setString(ULID text) finds every row");

        UUID given = UUID.randomUUID();
        try (PreparedStatement ps = conn.prepareStatement("INSERT INTO orders (ref, item) VALUES (?, ?) RETURNING id, ref")) {
            ps.setObject(1, given);
            ps.setString(2, "given a UUID");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                eq(rs.getString(2), Ulid.toText(given), "INSERT with setObject(UUID) into a ulid column: stored as its ULID text");
            }
        }

        // ulid[]: a parameter from createArrayOf("ulid", ...), a result from getArray()
        try (PreparedStatement ps = conn.prepareStatement(
                "SELECT array_agg(id ORDER BY id) FROM orders WHERE ref = ANY(?)")) {
            ps.setArray(1, conn.createArrayOf("ulid", refs.subList(3, 8).toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                eq(Arrays.asList((Long[]) rs.getArray(1).getArray()), ids.subList(3, 8),
                        "WHERE ref = ANY(?) with createArrayOf(\"ulid\", ULID texts)");
            }
        }
        try (Statement st = conn.createStatement();
             ResultSet rs = st.executeQuery("SELECT array_agg(ref ORDER BY id) FROM orders WHERE item <> 'given a UUID'")) {
            rs.next();
            Array array = rs.getArray(1);
            Object[] elements = (Object[]) array.getArray();
            List<String> texts = new ArrayList<>();
            for (Object e : elements) texts.add(String.valueOf(e));
            eq(array.getBaseTypeName() + " " + texts, "ulid " + refs, "getArray() on a ulid[]: base type ulid, every ULID text");
        }
        conn.close();
    }

    public static void main(String[] args) {
        try {
            run();
        } catch (Throwable e) {
            java.io.StringWriter trace = new java.io.StringWriter();
            e.printStackTrace(new java.io.PrintWriter(trace));
            ok(false, "no exception", trace);
        }
        System.out.println("1.." + tests);
        System.exit(failed == 0 ? 0 : 1);
    }
}
