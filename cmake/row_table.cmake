# A table of rows written from the list of their files: each file FILE defines the row
# `<namespace>::<FILE's stem>_row` of type TYPE, and TEMPLATE's @declarations@ and @pointers@
# become one declaration and one pointer per file, so that no hand-written list names them.
#   starling_row_table(TEMPLATE OUTPUT TYPE NAMESPACE FILE...)
function(starling_row_table template output type namespace)
  set(declarations "")
  set(pointers "")
  foreach(file ${ARGN})
    get_filename_component(stem ${file} NAME_WE)
    string(APPEND declarations "extern const ${type} ${stem}_row;\n")
    string(APPEND pointers "    &${namespace}::${stem}_row,\n")
  endforeach()
  configure_file(${template} ${output} @ONLY)
endfunction()
