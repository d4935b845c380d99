# The pysdcmicro command for the tests that run it: PYSDCMICRO_COMMAND, else `pysdcmicro` on
# the PATH. Tests needing it (or sdcMicro) skip with the reason where it is absent.
skip_without_command <- function() {
  old <- options(pysdcmicro.command = NULL)
  on.exit(options(old))
  cmd <- pysdcmicro_command()
  if (!nzchar(Sys.which(cmd[1L]))) {
    skip(paste0("the pysdcmicro command is not available (", cmd[1L],
                "); set PYSDCMICRO_COMMAND to run these tests"))
  }
}

skip_without_sdcmicro <- function() {
  skip_without_command()
  skip_if_not_installed("sdcMicro")
}

# A stand-in for the command: a shell script printing `stderr_lines` and exiting `status`.
fake_command <- function(stderr_lines, status, stdout_lines = character(0)) {
  path <- tempfile("fake-pysdcmicro-")
  body <- c("#!/bin/sh",
            sprintf("printf '%%s\\n' %s", shQuote(stdout_lines))[length(stdout_lines) > 0],
            sprintf("printf '%%s\\n' %s >&2", shQuote(stderr_lines)),
            sprintf("exit %d", status))
  writeLines(body, path)
  Sys.chmod(path, "0755")
  path
}

# A non-S4 object of class sdcMicroObj: passes the R-side check, needs no sdcMicro.
fake_obj <- function() structure(list(), class = "sdcMicroObj")

# pysdcmicro's information loss, computed here independently: 100 * SSE / SST on the
# z-scores of the original numeric key variables (masked values are group means).
il_of <- function(obj) {
  x <- as.matrix(obj@origData[, obj@numVars, drop = FALSE])
  m <- as.matrix(obj@manipNumVars)
  mu <- colMeans(x)
  s <- apply(x, 2, stats::sd)
  z <- sweep(sweep(x, 2, mu), 2, s, "/")
  zm <- sweep(sweep(m, 2, mu), 2, s, "/")
  100 * sum((z - zm)^2) / sum(z^2)
}
