"""How long a browser test waits for the site.

A setting changed on a simulator page redraws after a fresh run and curve: about 4.5 s on a quiet
machine and four times that under a loaded CI's parallel workers, the same work as a first load.
An assertion or a navigation returns as soon as the page is ready; this is only how long a failing
one waits, and an abandoned navigation would leave its request holding the simulator for the next test.
"""

SIMULATION_WAIT_MS = 60_000
