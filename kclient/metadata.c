/*
 * kclient/metadata.c - what every trace directory kclient writes says about
 * the machine in its metadata file (docs/FORMAT.md): kcl_md_machine() in
 * kclient/internal.h.  Plain libc, so the VM tests' helper can link it with
 * kclient/relay.c.
 */
#include <stdio.h>
#include <sys/utsname.h>

#include "kclient/internal.h"

void kcl_md_machine(FILE *f, long cpus)
{
	struct utsname u;

	if (uname(&u) == 0)
		fprintf(f, "host %s\nkernel %s\nmachine %s\n", u.nodename, u.release, u.machine);
	fprintf(f, "cpus %ld\n", cpus);
}
