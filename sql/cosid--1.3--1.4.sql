/* cosid--1.3--1.4.sql: from 1.3 to 1.4 */

\echo Use "ALTER EXTENSION cosid UPDATE TO '1.4'" to load this file. \quit
