-- scripts/demo.sql - the SQLite workload of `make demo` and bench/kft/run.sh:
-- about a second of work for the plain -O2 sqlite3 shell on an in-memory
-- database (`sqlite3 :memory: < scripts/demo.sql`), touching the parser, the
-- VDBE, the B-tree, the sorter, indexes, joins, aggregates and a window
-- function.  Every value is computed, so the run is deterministic and needs
-- no input file.  Output: a few short result lines (checked by nobody; they
-- only keep the queries from being optimised away).

-- 20 000 customers and 200 000 orders, inserted in one transaction.
BEGIN;
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT, since INTEGER);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER, day INTEGER,
                    amount REAL, status TEXT, note TEXT);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO customer
  SELECT i, 'customer-' || i, 'city-' || (i * 7 % 97), 2000 + i % 25 FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO orders
  SELECT i, (i * 7919) % 20000 + 1, i % 365, ((i * 31337) % 100000) / 100.0,
         CASE i % 5 WHEN 0 THEN 'open' WHEN 1 THEN 'paid' WHEN 2 THEN 'shipped'
                    WHEN 3 THEN 'paid' ELSE 'returned' END,
         printf('order %d for %d', i, (i * 7919) % 20000 + 1)
  FROM n;
COMMIT;

-- Three indexes.
CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_day_amount ON orders(day, amount);
CREATE INDEX customer_city ON customer(city);

-- Aggregates.
SELECT status, count(*), round(sum(amount), 2), round(avg(amount), 2)
  FROM orders GROUP BY status ORDER BY status;
SELECT day, count(*), max(amount) FROM orders WHERE day BETWEEN 100 AND 110
  GROUP BY day ORDER BY day LIMIT 3;

-- Joins.
SELECT c.city, count(*) AS n, round(sum(o.amount), 2) AS total
  FROM orders o JOIN customer c ON c.id = o.customer_id
  GROUP BY c.city ORDER BY total DESC LIMIT 5;
SELECT count(*) FROM customer c
  WHERE c.city = 'city-13'
    AND EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.amount > 900);

-- A window function: each customer's running total and rank.
SELECT customer_id, day, running, rnk FROM (
  SELECT customer_id, day,
         round(sum(amount) OVER (PARTITION BY customer_id ORDER BY day, id), 2) AS running,
         rank() OVER (PARTITION BY customer_id ORDER BY amount DESC) AS rnk
    FROM orders WHERE customer_id <= 4000)
  WHERE rnk = 1 ORDER BY running DESC LIMIT 3;

-- UPDATE, DELETE, CREATE TABLE AS.
UPDATE orders SET status = 'late' WHERE status = 'open' AND day < 60;
DELETE FROM orders WHERE amount < 50;
CREATE TABLE top_customer AS
  SELECT customer_id, count(*) AS n, round(sum(amount), 2) AS total
    FROM orders GROUP BY customer_id ORDER BY total DESC LIMIT 100;
SELECT count(*), max(total) FROM top_customer;
SELECT status, count(*) FROM orders GROUP BY status ORDER BY status;
