/*
 * twagd — the twag RADIUS/EAP gateway daemon (EAP-AKA', EAP-AKA, EAP-SIM
 * over RADIUS, RFC 3579). Everything is in src/server/ (tw_srv_main);
 * operator documentation: docs/twagd.md.
 */
#include "twag/server.h"

int main(int argc, char **argv)
{
	return tw_srv_main(argc, argv);
}
