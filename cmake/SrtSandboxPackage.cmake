# SPDX-License-Identifier: Apache-2.0
# libsrt as installed for programs that embed it, under names that do not clash with Debian's
# Secure Reliable Transport packages (which own libsrt, srt.pc and include/srt/):
#   <libdir>/libsrt-sandbox.a                      every libsrt module the facade needs, one archive
#   <includedir>/srt-sandbox/srt/*.h               the public API (#include "srt/sandbox.h")
#   <libdir>/cmake/SrtSandbox/                     find_package(SrtSandbox): SrtSandbox::srt-sandbox
#   <libdir>/pkgconfig/srt-sandbox.pc              pkg-config --cflags --libs srt-sandbox
# Static only: the public API passes std::string, std::function and structs that grow, so it has
# no stable ABI to give a shared library's SONAME. Every path in the package files is relative to
# where they are installed, so `cmake --install --prefix P` gives a package that works in P.
# Included at the end of the top-level CMakeLists.txt, once every target exists. Its install
# rules are the `dev` component (the srt-sandbox-dev Debian package, packaging/CMakeLists.txt).
include(CMakePackageConfigHelpers)

# The static libraries srt::srt links, found by walking its link graph, and the system libraries
# they need. A system library this does not know fails the configure: the installed package
# files below would not name it, and every program that embeds libsrt would fail to link.
# libseccomp is not one of them: it runs when srt is built (libsrt/src/seccomp/CMakeLists.txt).
set(srt_sandbox_system_libs PkgConfig::CARES PkgConfig::LIBNL PkgConfig::RE2
                             PkgConfig::OPENSSL Threads::Threads)
set(srt_sandbox_header_only nlohmann_json::nlohmann_json)  # used inside libsrt, nothing to link
function(srt_sandbox_closure target out_statics)
  set(seen "")
  set(statics "")
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue t)
    if(t MATCHES "^\\$<LINK_ONLY:(.+)>$")
      set(t ${CMAKE_MATCH_1})
    endif()
    if(t IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${t})
    if(t IN_LIST srt_sandbox_system_libs OR t IN_LIST srt_sandbox_header_only)
      continue()
    endif()
    # A plain library name or an imported target: something of the system's the package files
    # below would not name.
    set(imported TRUE)
    if(TARGET ${t})
      get_target_property(imported ${t} IMPORTED)
    endif()
    if(imported)
      message(FATAL_ERROR "libsrt links '${t}', which the installed package (cmake/SrtSandboxPackage.cmake) does not know")
    endif()
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      list(APPEND queue ${aliased})
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "STATIC_LIBRARY")
      list(APPEND statics ${t})
      get_target_property(links ${t} LINK_LIBRARIES)
    else()
      get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
    endif()
    if(links)
      list(APPEND queue ${links})
    endif()
  endwhile()
  set(${out_statics} ${statics} PARENT_SCOPE)
endfunction()
srt_sandbox_closure(srt_lib srt_sandbox_statics)

# One archive of them all (GNU ar's MRI script), so that an embedder links one library.
set(srt_sandbox_dir ${PROJECT_BINARY_DIR}/srt-sandbox)
set(srt_sandbox_archive ${srt_sandbox_dir}/libsrt-sandbox.a)
set(mri "CREATE ${srt_sandbox_archive}\n")
foreach(t IN LISTS srt_sandbox_statics)
  string(APPEND mri "ADDLIB $<TARGET_FILE:${t}>\n")
endforeach()
string(APPEND mri "SAVE\nEND\n")
file(GENERATE OUTPUT ${srt_sandbox_dir}/libsrt-sandbox.mri CONTENT "${mri}")
add_custom_command(
  OUTPUT ${srt_sandbox_archive}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${srt_sandbox_archive}
  COMMAND sh -c "\"$0\" -M < \"$1\"" ${CMAKE_AR} ${srt_sandbox_dir}/libsrt-sandbox.mri
  DEPENDS ${srt_sandbox_statics} ${srt_sandbox_dir}/libsrt-sandbox.mri
  COMMENT "Merging libsrt's modules into libsrt-sandbox.a"
  VERBATIM)
add_custom_target(srt_sandbox_archive ALL DEPENDS ${srt_sandbox_archive})

set(SRT_SANDBOX_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/SrtSandbox)
install(FILES ${srt_sandbox_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libsrt/include/srt
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/srt-sandbox COMPONENT dev FILES_MATCHING PATTERN "*.h")

# find_package(SrtSandbox): the package's paths are relative to its own folder (PACKAGE_INIT).
set(SRT_SANDBOX_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(SRT_SANDBOX_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/srt-sandbox)
file(RELATIVE_PATH srt_helpers_rel ${CMAKE_INSTALL_PREFIX} ${SRT_HELPERS_INSTALL_DIR})
set(SRT_SANDBOX_HELPERSDIR ${srt_helpers_rel})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/packaging/cmake/SrtSandboxConfig.cmake.in
  ${srt_sandbox_dir}/SrtSandboxConfig.cmake
  INSTALL_DESTINATION ${SRT_SANDBOX_CMAKE_DIR}
  PATH_VARS SRT_SANDBOX_LIBDIR SRT_SANDBOX_INCLUDEDIR SRT_SANDBOX_HELPERSDIR)
# 0.x: a minor release may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${srt_sandbox_dir}/SrtSandboxConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${srt_sandbox_dir}/SrtSandboxConfig.cmake ${srt_sandbox_dir}/SrtSandboxConfigVersion.cmake
        DESTINATION ${SRT_SANDBOX_CMAKE_DIR} COMPONENT dev)

# pkg-config: ${pcfiledir} makes the prefix wherever the file is.
file(RELATIVE_PATH SRT_SANDBOX_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" SRT_SANDBOX_PC_TO_PREFIX "${SRT_SANDBOX_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/packaging/pkgconfig/srt-sandbox.pc.in
               ${srt_sandbox_dir}/srt-sandbox.pc @ONLY)
install(FILES ${srt_sandbox_dir}/srt-sandbox.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
