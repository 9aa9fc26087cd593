int hs_placeholder_gather;
