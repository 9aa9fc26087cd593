int hs_placeholder_output;
