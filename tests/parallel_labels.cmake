# Read by ctest after the tests gtest_discover_tests found (their names are in
# <target>_TESTS): the core and samples unit tests run one thread each, so they get the
# label "parallel", which scripts/test.sh runs two at a time.
foreach(suite core samples)
  if(geodl_${suite}_tests_TESTS)
    set_tests_properties(${geodl_${suite}_tests_TESTS} PROPERTIES LABELS "${suite};parallel")
  endif()
endforeach()
