/* Keeps uv_testsupport non-empty before any support file exists. */
typedef int uv_testsupport_empty;
