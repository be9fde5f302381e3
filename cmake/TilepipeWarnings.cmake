# Warning flags and sanitizer flags on INTERFACE targets (never global flags).
add_library(tilepipe_warnings INTERFACE)
target_compile_options(tilepipe_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  # GCC 12 reports false -Wrestrict positives inside std::string concatenation (GCC bug 105651).
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
  $<$<BOOL:${TILEPIPE_WERROR}>:-Werror>)

# The sanitizer builds keep line tables only (-g1: file:line in every report, a fraction of full
# debug information's compile and link time); TSan at -O1, as its documentation recommends.
# A target with the property TILEPIPE_UNINSTRUMENTED (tp_add_gtest's PROCESS tests: they drive the
# instrumented tilepipe executable and check its output) is compiled without the instrumentation,
# which doubles the compile time of a gtest file, and still links the sanitizer's runtime for the
# instrumented libraries it links.
add_library(tilepipe_sanitizers INTERFACE)
set(tp_instrumented "$<NOT:$<BOOL:$<TARGET_PROPERTY:TILEPIPE_UNINSTRUMENTED>>>")
if(TILEPIPE_SANITIZER STREQUAL "address")
  target_compile_options(tilepipe_sanitizers INTERFACE
    "$<${tp_instrumented}:-fsanitize=address$<COMMA>undefined;-fno-sanitize-recover=undefined>"
    -fno-omit-frame-pointer -g1)
  target_link_options(tilepipe_sanitizers INTERFACE -fsanitize=address,undefined)
elseif(TILEPIPE_SANITIZER STREQUAL "thread")
  target_compile_options(tilepipe_sanitizers INTERFACE "$<${tp_instrumented}:-fsanitize=thread>"
                                                       -fno-omit-frame-pointer -O1 -g1)
  target_link_options(tilepipe_sanitizers INTERFACE -fsanitize=thread)
elseif(TILEPIPE_SANITIZER STREQUAL "fuzzer")
  # libFuzzer builds (clang, the fuzz preset): ASan+UBSan plus coverage for libFuzzer in every
  # library; the fuzz targets themselves link -fsanitize=fuzzer (tests/fuzz).
  target_compile_options(tilepipe_sanitizers INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
    -fno-omit-frame-pointer)
  target_link_options(tilepipe_sanitizers INTERFACE -fsanitize=address,undefined)
elseif(NOT TILEPIPE_SANITIZER STREQUAL "")
  message(FATAL_ERROR "TILEPIPE_SANITIZER must be empty, 'address', 'thread' or 'fuzzer', not '${TILEPIPE_SANITIZER}'")
endif()
