/* probes: filled by the probes module */
int agsbx_probes_placeholder(void);
int agsbx_probes_placeholder(void) { return 0; }
