"""Review: working with a recruitment platform on one study, after the platform adapters say how.

Owns opening the study there (:mod:`.setup`: what a researcher pastes into each platform;
:mod:`.drafts`: the one API call that opens it), what the study's rules suggest for each submission
(:mod:`.suggest`: approve with the bonus, reject with a reason and a message, or nothing), staff's
decisions and the review table (:mod:`.decisions`), and sending the decisions and paying the bonuses
through the platform's client, every call kept in the audit log (:mod:`.sending`).

The platforms themselves (links, identity, completion, their API clients and the interface those
implement) are :mod:`studyapp.services.platforms`; this package only calls them.
"""
