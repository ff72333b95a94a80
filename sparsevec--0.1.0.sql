-- sparsevec 0.1.0: the sparsevec type and the sparse_maxscore index

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION sparsevec" to load this file. \quit

------------------------------------------------------------------------
-- the sparsevec type
------------------------------------------------------------------------

------------------------------------------------------------------------
-- the sparse_maxscore index access method
------------------------------------------------------------------------
