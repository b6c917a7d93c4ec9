# Turns the schema text into a C++ raw string literal include.
file(READ ${IN} text)
file(WRITE ${OUT} "R\"RLSCHEMA(${text})RLSCHEMA\"\n")
