# Finds the C++ Actor Framework (Debian's libcaf-dev ships no CMake config).
# Provides the CAF::core imported target (Starling's actors are local; CAF's network layer,
# caf_io, is not used).
find_path(CAF_INCLUDE_DIR caf/all.hpp)
find_library(CAF_CORE_LIBRARY caf_core)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_CORE_LIBRARY CAF_INCLUDE_DIR)

if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY)
