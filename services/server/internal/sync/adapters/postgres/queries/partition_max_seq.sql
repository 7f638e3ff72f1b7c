-- The highest seq of one partition (the quoted name is formatted in), NULL when it is empty.
SELECT max(seq) FROM %s
