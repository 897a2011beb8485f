// Hibernate 3.6 (Debian's libhibernate3-java) against cosid (TAP): tables
// made in SQL and checked by hbm2ddl validate (hbm2ddl create would make the
// IDENTITY id a bigserial); ids from the cosid_next default through getGeneratedKeys, a ulid
// column as java.util.UUID (pg-uuid, read through ref::uuid), a gen_uuidv7()
// id, UUID parameters in HQL, cosid_encode/cosid_decode/cosid_unpack with
// parameters in native queries.  Connects with PGHOST, PGPORT and PGUSER (TCP),
// as a superuser, and makes its own database, cosid_hibernate.  Run by
// hibernate_test.sh.
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import javax.persistence.Column;
import javax.persistence.Entity;
import javax.persistence.GeneratedValue;
import javax.persistence.GenerationType;
import javax.persistence.Id;
import javax.persistence.Table;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.annotations.ColumnTransformer;
import org.hibernate.annotations.Generated;
import org.hibernate.annotations.GenerationTime;
import org.hibernate.annotations.Type;
import org.hibernate.cfg.Configuration;

public class CosidHibernateTest {
    @Entity
    @Table(name = "orders")
    public static class Order {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)  // with hibernate.jdbc.use_get_generated_keys
        public Long id;

        @Generated(GenerationTime.INSERT)  // read back after the insert
        @Type(type = "pg-uuid")
        @ColumnTransformer(read = "ref::uuid")
        @Column(columnDefinition = "ulid", insertable = false, updatable = false)
        public UUID ref;

        @Column(nullable = false)
        public String item;
    }

    @Entity
    @Table(name = "events")
    public static class Event {
        @Id
        @GeneratedValue(strategy = GenerationType.IDENTITY)
        public Long id;

        @Generated(GenerationTime.INSERT)
        @Type(type = "pg-uuid")
        @Column(insertable = false, updatable = false)
        public UUID uid;

        @Type(type = "pg-uuid")
        @ColumnTransformer(read = "ref::uuid")
        @Column(columnDefinition = "ulid", nullable = false)
        public UUID ref;  // written from Java

        @Column(nullable = false)
        public String name;
    }

    static final String SCHEMA = """
        SELECT cosid_define('order', '{"strategy": "snowflake"}');
        CREATE TABLE orders (
            id   bigint PRIMARY KEY DEFAULT cosid_next('order'),
            ref  ulid NOT NULL UNIQUE DEFAULT gen_ulid_monotonic(),
            item text NOT NULL
        );
        CREATE TABLE events (
            id   bigint PRIMARY KEY DEFAULT cosid_next('order'),
            uid  uuid NOT NULL UNIQUE DEFAULT gen_uuidv7(),
            ref  ulid NOT NULL,
            name text NOT NULL
        );
        """;

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

    static SessionFactory sessionFactory(String url, String user, String ddl) {
        return new Configuration()
                .setProperty("hibernate.dialect", "org.hibernate.dialect.PostgreSQLDialect")
                .setProperty("hibernate.connection.driver_class", "org.postgresql.Driver")
                .setProperty("hibernate.connection.url", url)
                .setProperty("hibernate.connection.username", user)
                .setProperty("hibernate.jdbc.use_get_generated_keys", "true")
                .setProperty("hibernate.hbm2ddl.auto", ddl)
                .addAnnotatedClass(Order.class)
                .addAnnotatedClass(Event.class)
                .buildSessionFactory();
    }

    public static void main(String[] args) throws Exception {
        String host = System.getenv().getOrDefault("PGHOST", "localhost");
        String port = System.getenv().getOrDefault("PGPORT", "5432");
        String user = System.getenv().getOrDefault("PGUSER", "postgres");
        String base = "jdbc:postgresql://" + host + ":" + port + "/";
        try (Connection c = DriverManager.getConnection(base + "postgres", user, null);
             Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS cosid_hibernate");
            st.execute("CREATE DATABASE cosid_hibernate");
        }
        String url = base + "cosid_hibernate";
        try (Connection c = DriverManager.getConnection(url, user, null);
             Statement st = c.createStatement()) {
            st.execute("CREATE EXTENSION cosid");
            st.execute(SCHEMA);
        }
        try {
            run(url, user);
        } catch (Exception e) {
            ok(false, "no exception", e);
            e.printStackTrace(System.out);
        }
        System.out.println("1.." + tests);
        System.exit(failed > 0 ? 1 : 0);
    }

    static void run(String url, String user) throws Exception {
        SessionFactory sf = sessionFactory(url, user, "validate");
        ok(true, "hbm2ddl validate accepts the tables", null);

        // Ids and refs from the defaults.
        List<Order> orders = new ArrayList<>();
        Session s = sf.openSession();
        s.beginTransaction();
        for (int i = 0; i < 10; i++) {
            Order o = new Order();
            o.item = "item " + i;
            s.save(o);
            orders.add(o);
        }
        s.getTransaction().commit();
        s.close();
        Order first = orders.get(0);
        ok(first.id != null && first.id > (1L << 53), "save() gets the id from the cosid_next default (above 2^53)", first.id);
        boolean increasing = true;
        for (int i = 1; i < orders.size(); i++)
            increasing &= orders.get(i).id > orders.get(i - 1).id
                    && orders.get(i).ref.compareTo(orders.get(i - 1).ref) > 0;
        ok(increasing, "ids and refs (UUIDs read back after the insert) increase", null);

        s = sf.openSession();
        Object[] row = (Object[]) s.createSQLQuery("SELECT cast(id as text), cast(cast(ref as uuid) as text) FROM orders WHERE item = 'item 3'").uniqueResult();
        Order third = orders.get(3);
        eq(row[0] + " " + row[1], third.id + " " + third.ref, "the id and the ref are the server's");

        // pg-uuid alone fails on a ulid: pgjdbc gives a PGobject, not a UUID.
        Exception bare = null;
        try {
            s.createSQLQuery("SELECT ref FROM orders").addScalar("ref", org.hibernate.type.PostgresUUIDType.INSTANCE).list();
        } catch (Exception ex) {
            bare = ex;
        }
        ok(bare != null, "without the read transformer pg-uuid fails to read a ulid", bare);

        // A UUID parameter finds its row; get() reads one back.
        Order found = (Order) s.createQuery("from CosidHibernateTest$Order where ref = :ref")
                .setParameter("ref", third.ref, org.hibernate.type.PostgresUUIDType.INSTANCE).uniqueResult();
        eq(found == null ? null : found.id, third.id, "HQL where ref = :ref with a UUID");
        Order got = (Order) s.get(Order.class, third.id);
        eq(got == null ? null : got.ref, third.ref, "get() by id reads the ref as a UUID");
        s.close();

        // A ulid written from Java, and gen_uuidv7() ids.
        s = sf.openSession();
        s.beginTransaction();
        Event e = new Event();
        e.ref = third.ref;
        e.name = "shipped";
        s.save(e);
        s.getTransaction().commit();
        s.close();
        ok(e.id != null && e.uid != null && e.uid.version() == 7 && e.uid.variant() == 2, "save() gets an id and a gen_uuidv7() uuid", e.uid);
        s = sf.openSession();
        Event back = (Event) s.createQuery("from CosidHibernateTest$Event where ref = :ref")
                .setParameter("ref", third.ref, org.hibernate.type.PostgresUUIDType.INSTANCE).uniqueResult();
        eq(back == null ? null : back.uid, e.uid, "the ulid written from a UUID finds its event");
        Object text = s.createSQLQuery("SELECT cast(ref as text) FROM events WHERE id = :id")
                .setParameter("id", e.id).uniqueResult();
        Object orderText = s.createSQLQuery("SELECT cast(ref as text) FROM orders WHERE id = :id").setParameter("id", third.id).uniqueResult();
        eq(text, orderText, "it is the same ulid as the order's");

        // encode, decode, unpack with parameters.
        String code = (String) s.createSQLQuery("SELECT cosid_encode(:name, :id)")
                .setParameter("name", "order").setParameter("id", third.id).uniqueResult();
        eq(code, String.valueOf(third.id), "cosid_encode(:name, :id) (no codec: decimal)");
        Object decoded = s.createSQLQuery("SELECT cosid_decode(:name, :txt)")
                .setParameter("name", "order").setParameter("txt", code).uniqueResult();
        eq(decoded, BigInteger.valueOf(third.id), "cosid_decode(:name, :txt)");
        Object with = s.createSQLQuery("SELECT cosid_encode_with(:id, cast(:codec as jsonb))")
                .setParameter("id", 3844L).setParameter("codec", "[{\"radix\": 62}]").uniqueResult();
        eq(with, "100", "cosid_encode_with(:id, cast(:codec as jsonb))");
        Object node = s.createSQLQuery("SELECT node FROM cosid_unpack(:name, :id)")
                .setParameter("name", "order").setParameter("id", third.id).uniqueResult();
        ok(node instanceof Integer, "cosid_unpack(:name, :id)", node);
        s.close();
        sf.close();
    }
}
