# cmake/posenc_python.cmake — whether the Python module (python/) can be built, for which interpreter, and the
# position-independent code it needs. Sets POSENC_PYTHON_MODULE (ON when it is built) and POSENC_MODULE_PYTHON.
#
# The interpreter: POSENC_MODULE_PYTHON if given, else Debian's /usr/bin/python3 (where python3-numpy,
# python3-pybind11 and python3-pytest install), else the first python3 on PATH. The module is built for that
# interpreter's version and ABI and imported by it.
set(POSENC_PYTHON_MODULE OFF)
if(NOT DEFINED POSENC_MODULE_PYTHON)
  if(EXISTS /usr/bin/python3)
    set(POSENC_MODULE_PYTHON /usr/bin/python3)
  else()
    find_program(POSENC_MODULE_PYTHON python3)
  endif()
endif()
set(POSENC_MODULE_PYTHON "${POSENC_MODULE_PYTHON}" CACHE FILEPATH "python3 the posenc module is built for")
if(POSENC_MODULE_PYTHON)
  set(Python_EXECUTABLE ${POSENC_MODULE_PYTHON})
  set(PYBIND11_FINDPYTHON ON)
  find_package(Python 3.8 COMPONENTS Interpreter Development.Module QUIET)
  find_package(pybind11 2.6 CONFIG QUIET)
endif()
if(Python_FOUND AND pybind11_FOUND)
  set(POSENC_PYTHON_MODULE ON)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
  add_compile_options(-fno-semantic-interposition)
  message(STATUS "posenc Python module: for ${Python_EXECUTABLE} (${Python_VERSION}), pybind11 ${pybind11_VERSION}")
else()
  message(STATUS "posenc Python module not built: needs pybind11 (Debian pybind11-dev) and the headers of "
                 "${POSENC_MODULE_PYTHON} (python3-dev); scripts/install-deps.sh installs them")
endif()
