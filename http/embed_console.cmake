# Writes the console's built assets (ui/dist) as C++ arrays that
# http/console_built_in.cc includes: DIR the folder, OUT the file written.
# Only the types the console serves are taken (http/console.cc), in name
# order, so that the same assets give the same bytes.
file(GLOB_RECURSE files RELATIVE ${DIR} ${DIR}/*)
list(SORT files)
set(arrays "")
set(table "")
set(i 0)
foreach(f IN LISTS files)
  if(NOT f MATCHES "\\.(html|js|css|svg|json|map|txt|png|ico|woff2)$")
    continue()
  endif()
  file(READ ${DIR}/${f} hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR n "${n} / 2")
  if(n EQUAL 0)
    set(bytes "0")
  else()
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  endif()
  string(APPEND arrays "const unsigned char kConsoleFile${i}[] = {${bytes}};\n")
  string(APPEND table "{\"${f}\", kConsoleFile${i}, ${n}},\n")
  math(EXPR i "${i} + 1")
endforeach()
file(WRITE ${OUT}.tmp "// Generated from ui/dist by http/embed_console.cmake.\n${arrays}\
const ConsoleAsset kConsoleAssets[] = {\n${table}{nullptr, nullptr, 0}};\n")
# Rewritten only when changed: the file that includes it is not rebuilt
# for nothing.
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
