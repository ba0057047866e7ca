# embed.cmake: turns a file into a C source holding its bytes, so the coordinator serves
# the dashboard page from its own binary (no file to install, nothing to go missing).
#   cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
# defines  const char NAME[] (the bytes plus a NUL) and  const size_t NAME_len.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR nbytes "${nhex} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n  " bytes "${bytes}")
get_filename_component(src "${IN}" NAME)
file(WRITE "${OUT}.tmp"
  "/* Generated from ${src} by embed.cmake at build time; edit ${src}, not this. */\n"
  "#include <stddef.h>\n"
  "extern const char ${NAME}[];\n"
  "extern const size_t ${NAME}_len;\n"
  "const char ${NAME}[] = {\n  ${bytes}0x00};\n"
  "const size_t ${NAME}_len = ${nbytes};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
