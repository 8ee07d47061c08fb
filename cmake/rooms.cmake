# A folder's room check (FOLDER/check_rooms.sh SOURCE_DIR), run as a build step before the
# folder's libraries compile, again whenever one of its files or the check changes.
#   starling_rooms_check(TARGET WHAT)   makes the custom target TARGET; WHAT ends the build
#                                       log's line ("Checking that WHAT")
# The libraries then add_dependencies on TARGET.
function(starling_rooms_check target what)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS
    ${CMAKE_CURRENT_SOURCE_DIR}/*.h ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/rooms.checked
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_rooms.sh ${PROJECT_SOURCE_DIR}
    COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_CURRENT_BINARY_DIR}/rooms.checked
    DEPENDS ${sources} ${CMAKE_CURRENT_SOURCE_DIR}/CMakeLists.txt ${CMAKE_CURRENT_SOURCE_DIR}/check_rooms.sh ${PROJECT_SOURCE_DIR}/cmake/rooms.sh
    COMMENT "Checking that ${what}")
  add_custom_target(${target} DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/rooms.checked)
endfunction()
