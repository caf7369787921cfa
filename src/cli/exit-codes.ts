/** The exit codes of `conch`. */
export const EXIT_OK = 0;
/** The command failed: a broker error, a connection that failed, bad input. */
export const EXIT_ERROR = 1;
/** The command line was wrong: an unknown option, a bad option value, a missing argument. */
export const EXIT_USAGE = 2;
