"""What people come back to: topics told over several sessions, topics everyone talks about,
and plans that change.

``{p}`` is the person a question names, ``{their}`` that person's possessive pronoun, ``{o}``
the person a turn is said to and ``{x}`` a plan's current value.
"""

from __future__ import annotations

from typing import NamedTuple


class Spread(NamedTuple):
    """One person's statements on one topic across sessions: the answer is all of them."""

    tags: frozenset[str]
    question: str
    statements: tuple[str, ...]


class Crowded(NamedTuple):
    """One person says one thing on a topic the others talk about again and again."""

    tags: frozenset[str]
    #: the topic's word: the person says it in the evidence and in no other turn
    word: str
    question: str
    evidence: str
    answer: str
    others: tuple[str, ...]


class Chain(NamedTuple):
    """A plan stated, then changed (once or twice): the answer is its latest state."""

    tags: frozenset[str]
    question: str
    steps: tuple[str, str, str]
    values: tuple[str, ...]


def _t(*tags: str) -> frozenset[str]:
    return frozenset(tags)


SPREADS: tuple[Spread, ...] = (
    Spread(
        _t("travel"),
        "Which places has {p} been to on trips?",
        (
            "Just back from my trip to Porto, I ate my body weight in custard tarts.",
            "Spent the long weekend in Ghent, all canals and waffles.",
            "Day trip to Whitby today, we climbed the 199 steps to the abbey.",
            "Got back from Kraków last night, the salt mine was unreal.",
            "Three-day trip to Seville and I somehow got sunburnt on my ears.",
            "Finally made it to the Isle of Skye, the midges were savage.",
            "Went up to Edinburgh for the weekend, it rained sideways the whole time.",
            "Our Bruges trip was mostly looking into chocolate shops.",
            "Back from Ljubljana, the dragon bridge is smaller than I thought.",
            "Spent a night in Tallinn, the old town looks like a film set.",
        ),
    ),
    Spread(
        _t("job"),
        "What has {p} said about {their} job?",
        (
            "My manager at work has booked a meeting over lunch every single day this week.",
            "We're moving office to the business park, my commute is going to double.",
            "I got told I'm up for team lead at the review, fingers crossed.",
            "Night shifts again at work, four in a row, my body clock has given up.",
            "The new software at work keeps crashing and we lost two days of invoices.",
            "Finally got my pay rise through after months of chasing HR.",
            "A client screamed at me down the phone today, I had to sit on the fire escape for ten minutes.",
            "I'm training the two new starters at the warehouse, they're keen at least.",
        ),
    ),
    Spread(
        _t("books"),
        "Which books has {p} read?",
        (
            "Finished the book The Salt Road last night, the ending wrecked me.",
            "Halfway through Harbour of Glass, the narrator is so unreliable.",
            "Read The Orchard Keeper's Daughter in one sitting on the sofa.",
            "Gave up on A Winter in Lyon, two hundred pages and nothing happened.",
            "Just read Small Hours, a thriller set in a night bus depot, loved the book.",
            "Reading Fathoms at the moment, it's all about deep-sea divers.",
            "Got through The Tin Crown on holiday, the twist was obvious but fun.",
        ),
    ),
    Spread(
        _t("cooking", "food"),
        "What dishes has {p} cooked?",
        (
            "Cooked a lamb tagine on Sunday, too much cumin but still good.",
            "Tried making gyoza from scratch, they looked like little crime scenes.",
            "Cooked a massive pot of dal for the week, the flat smells amazing.",
            "Cooked my first ever paella, the crispy bit at the bottom was the best part.",
            "Made shakshuka for brunch and even the fussy one ate it.",
            "Baked a lemon drizzle for Mum's visit, it sank in the middle.",
            "Did a slow-roast pork belly, the crackling actually crackled.",
        ),
    ),
    Spread(
        _t("health"),
        "What health problems has {p} mentioned?",
        (
            "My knee swelled up again after the stairs at the station.",
            "Health update: a migraine for two whole days, lying in the dark with a flannel.",
            "The physio says it's a frozen shoulder, exercises every morning now.",
            "Dentist found a cracked filling, so that's my Thursday ruined.",
            "My back went while I was lifting the shopping out of the boot.",
            "Hay fever is destroying me, my eyes are like golf balls.",
            "Not great health-wise, this cough has been hanging around for three weeks now.",
        ),
    ),
    Spread(
        _t("music", "gigs"),
        "Which concerts has {p} been to?",
        (
            "Saw The Lanterns in concert at the Academy, the drummer broke a stick in the first song.",
            "Went to a jazz night at the Blue Cellar, a trumpet player did a twenty-minute solo.",
            "Caught Velvet Harbour at the festival, sang myself hoarse.",
            "Took Mum to hear a choir in the cathedral, she cried at the last hymn.",
            "Saw a folk trio upstairs at the Crown, only fifteen of us there but magic.",
            "The orchestra concert at the town hall was Mahler's Fifth, I was a wreck.",
        ),
    ),
    Spread(
        _t("sport"),
        "Which sports has {p} tried?",
        (
            "Tried bouldering for the first time, my forearms are dead.",
            "Tried a beginners' rowing session on the river, fell in once.",
            "Played five-a-side with my cousins and scored an own goal.",
            "Did my first parkrun, twenty-nine minutes, not bad.",
            "Tried fencing at the leisure centre, it's like chess with swords.",
            "Had a surf lesson and stood up on the board twice!",
        ),
    ),
    Spread(
        _t("garden"),
        "What has {p} said about {their} garden?",
        (
            "The tomatoes in the garden are finally turning red, all three of them.",
            "Slugs ate every single lettuce overnight, I'm at war now.",
            "Put up a bird box on the garden fence, a blue tit is already inspecting it.",
            "The apple tree came down in the storm, just snapped at the base.",
            "Dug a little pond at the bottom of the garden, frogs moved in within a week.",
            "My sunflowers are taller than the shed now.",
        ),
    ),
    Spread(
        _t("sister", "family"),
        "What has {p} said about {their} sister?",
        (
            "My sister is moving to Canada in the spring, I'm gutted.",
            "My sister rang at midnight to tell me she's pregnant!",
            "Had a massive row with my sister about Dad's birthday.",
            "My sister got a puppy and sends me forty photos a day.",
            "My sister passed her nursing exams, first try.",
            "Helped my sister paint her new flat, we fell out over the skirting boards.",
        ),
    ),
    Spread(
        _t("home", "shopping"),
        "What has {p} bought for {their} flat?",
        (
            "Picked up a second-hand oak table for forty quid, it just needs a sand.",
            "Bought a standing lamp that makes the living room look like a film set.",
            "Bought a proper mattress for the flat at last, my back thanks me.",
            "Found a huge mirror at a flea market and carried it home on the bus.",
            "Bought a rug with a tiger on it, zero regrets.",
            "Treated myself to a coffee machine, goodbye instant.",
        ),
    ),
    Spread(
        _t("films"),
        "Which films has {p} watched?",
        (
            "Watched Lighthouse Men at the arthouse cinema, so bleak, loved the film.",
            "Finally saw Paper Moons, the one everyone keeps quoting.",
            "Rewatched The Long Summer with the kids, they didn't get it.",
            "Saw the film Iron Orchard at the drive-in, popcorn everywhere.",
            "Fell asleep during Seven Rivers, apparently the ending is great.",
            "Watched a Korean horror called The Well and didn't sleep.",
        ),
    ),
    Spread(
        _t("learning"),
        "What has {p} been learning?",
        (
            "Week three of learning Italian on the app, I can order coffee and apologise.",
            "Learning bookkeeping at an evening course, spreadsheets everywhere.",
            "Learning to knit, the scarf is more hole than scarf.",
            "Watched videos on fixing a dripping tap, I am now a plumber.",
            "Practising sign language with my neighbour's kid, she's a brilliant teacher.",
            "Taking a first aid course at the church hall on Saturdays.",
        ),
    ),
)


CROWDED: tuple[Crowded, ...] = (
    Crowded(
        _t("allotment", "garden"),
        "allotment",
        "What did {p} say happened at the allotment?",
        "Someone pinched every courgette off my allotment plot overnight.",
        "someone stole the courgettes",
        (
            "The allotment committee wants to put the fees up again.",
            "Spent all Sunday at the allotment digging potatoes.",
            "{o}, have you seen the new greenhouse at the allotment?",
            "There's a fox living under the allotment shed now.",
            "My allotment neighbour gave me a bag of rhubarb the size of a child.",
            "Allotment open day is in June, {o}, you should come along.",
            "The water butts at the allotment are empty again.",
            "Planted garlic at the allotment, fingers crossed.",
            "The allotment gate code changed and nobody told me.",
            "{o}, I left your trowel in the allotment shed.",
        ),
    ),
    Crowded(
        _t("gym", "sport"),
        "gym",
        "What did {p} say about the gym?",
        "The gym cancelled my membership by mistake and then charged me twice.",
        "cancelled the membership by mistake and charged twice",
        (
            "Gym was rammed tonight, a queue for every machine.",
            "{o}, the gym has a new sauna, you'd love it.",
            "Did legs at the gym, can't walk now.",
            "The gym music is so loud I can feel it in my teeth.",
            "The new instructor at the gym is terrifying.",
            "Going to the gym before breakfast now, who even am I.",
            "The gym showers are freezing again.",
            "{o}, are you coming to the spin class at the gym on Friday?",
            "Someone nicked my towel at the gym.",
            "The gym is shutting for a refit in the summer.",
        ),
    ),
    Crowded(
        _t("choir", "music"),
        "choir",
        "What did {p} say about the choir?",
        "I've been given the solo in the choir's winter concert!",
        "got the solo in the winter concert",
        (
            "Choir practice ran late again.",
            "{o}, the choir needs more tenors, just saying.",
            "Our choir leader wants us to sing a song in Welsh.",
            "Choir tonight, my voice is shot.",
            "The choir is doing a flash mob at the station, pray for me.",
            "We sang at the hospice with the choir, everyone joined in.",
            "Choir subs went up to a fiver.",
            "I keep singing the alto line at choir by mistake.",
            "{o}, you'd like the new choir arrangement, it's all harmonies.",
            "Choir is having a bake sale, I'm on scones.",
        ),
    ),
    Crowded(
        _t("train"),
        "train",
        "What did {p} say about the train?",
        "My train broke down in a tunnel and we sat in the dark for two hours.",
        "it broke down in a tunnel for two hours",
        (
            "The train was late again, third time this week.",
            "Got a seat on the train for once!",
            "{o}, did you hear the trains are on strike on Thursday?",
            "Someone was eating a whole fish on the train this morning.",
            "Train tickets went up again.",
            "Missed my train by ten seconds, the doors closed in my face.",
            "The train wifi is a myth.",
            "Fell asleep on the train and woke up at the depot.",
            "{o}, get the earlier train, the later one is always packed.",
            "A dog on the train today sat on the seat like a person.",
        ),
    ),
    Crowded(
        _t("neighbours"),
        "neighbours",
        "What did {p} say about the neighbours?",
        "The neighbours' teenager set off the fire alarm making toast at three in the morning.",
        "their teenager set off the fire alarm at 3am",
        (
            "New neighbours moved in, they have a parrot.",
            "{o}, your neighbours were having a party again, I heard it from the street.",
            "The neighbours keep leaving their bins on our side.",
            "Our neighbours brought round a cake, so nice of them.",
            "The neighbours' cat is in my kitchen again.",
            "The neighbours are building an extension, drilling all day.",
            "Said hello to the neighbours and they just nodded.",
            "The neighbours' dog howls whenever they go out.",
            "{o}, do your neighbours still play the trombone?",
            "The neighbours put up fairy lights already.",
        ),
    ),
    Crowded(
        _t("bookclub", "books"),
        "book club",
        "What did {p} say about the book club?",
        "I got voted in as the new book club treasurer.",
        "voted in as treasurer",
        (
            "Book club picked a 900-page novel, nobody will finish it.",
            "{o}, book club is at mine next month.",
            "Book club is mostly wine and gossip at this point.",
            "Someone at book club hadn't read the book and bluffed for an hour.",
            "Book club is moving to Wednesdays.",
            "The book club argument about the ending went on till midnight.",
            "Brought lemon bars to book club, huge hit.",
            "Book club wants to do a classic next.",
            "{o}, you'd fit right in at book club.",
            "Half the book club cancelled tonight.",
        ),
    ),
    Crowded(
        _t("football", "sport"),
        "football",
        "What did {p} say about the football team?",
        "I've been made captain of the Sunday league football team!",
        "made captain",
        (
            "The football team lost four nil on Saturday, grim.",
            "{o}, are you watching the football tonight?",
            "Our football team's new striker is useless.",
            "Football on the telly all weekend, I've lost the remote.",
            "The football pitch was a swamp, we played anyway.",
            "Football training moved to Wednesdays.",
            "Our football team finally won a match!",
            "{o}, the football team needs a goalkeeper on Sunday.",
            "Bought new football boots, my feet are in pieces.",
            "The football team's kit is bright orange this year.",
        ),
    ),
    Crowded(
        _t("car"),
        "car",
        "What did {p} say about the car?",
        "The car failed its MOT on the brakes and the exhaust.",
        "failed its MOT on brakes and exhaust",
        (
            "Car's making a weird rattle again.",
            "{o}, can I borrow your car on Saturday?",
            "Washed the car and it rained an hour later.",
            "Someone scraped the car in the supermarket car park.",
            "Car insurance renewal came in and it's doubled.",
            "The car battery died in the cold.",
            "Finally cleaned out the car, found four umbrellas.",
            "The car's in the garage until Friday.",
            "{o}, your car's blocking the drive, just so you know.",
            "The car's air con only blows hot now.",
        ),
    ),
    Crowded(
        _t("landlord", "home"),
        "landlord",
        "What did {p} say about the landlord?",
        "My landlord is putting the rent up by two hundred a month.",
        "putting the rent up by £200 a month",
        (
            "The landlord still hasn't fixed the leak.",
            "{o}, did your landlord ever send the deposit back?",
            "The landlord turned up unannounced again.",
            "Our landlord wants to sell the building.",
            "The landlord sent a plumber who just shrugged.",
            "The landlord finally replaced the oven!",
            "Texted the landlord about the mould, nothing.",
            "The landlord's painting the hallway beige, naturally.",
            "{o}, your landlord sounds like a nightmare.",
            "The landlord wants to do an inspection on Monday.",
        ),
    ),
    Crowded(
        _t("wedding"),
        "wedding",
        "What did {p} say about the wedding?",
        "I've been asked to give a speech at my cousin's wedding, I'm terrified.",
        "asked to give a speech",
        (
            "Wedding planning is taking over my life.",
            "{o}, are you bringing anyone to the wedding?",
            "The wedding venue wants a deposit by Friday.",
            "Went shopping for a wedding outfit, nothing fits.",
            "The wedding playlist debate continues.",
            "The wedding invites came out wonky from the printer.",
            "There's going to be a ceilidh at the wedding.",
            "Wedding cake tasting was the best afternoon of my life.",
            "{o}, the wedding dress code says pastels.",
            "The wedding is going to be outdoors, pray for sun.",
        ),
    ),
)


CHAINS: tuple[Chain, ...] = (
    Chain(
        _t("holiday", "travel"),
        "Where is {p} going on holiday?",
        (
            "We've settled on {x} for the summer holiday, flights are cheap.",
            "Change of plan, the holiday is {x} now, my cousin's coming with us.",
            "Final answer on the holiday: {x}. Booked and paid, no more changes.",
        ),
        ("Crete", "Lisbon", "the Lake District", "Sicily", "Tenerife", "Norway", "Croatia", "the Dordogne"),
    ),
    Chain(
        _t("moving", "home"),
        "Which city is {p} moving to?",
        (
            "Looks like we're moving to {x}, the rents are half what we pay here.",
            "Scrap that, we're moving to {x} instead, the first place fell through.",
            "Definitely {x} now, we signed the lease this afternoon.",
        ),
        ("Leeds", "Bristol", "Glasgow", "Cardiff", "Norwich", "York", "Belfast"),
    ),
    Chain(
        _t("car", "buying"),
        "Which car is {p} buying?",
        (
            "I'm going for {x}, the dealer's doing a good price.",
            "Not that one after all, I'm buying {x}, it's got more boot space.",
            "Changed my mind once more, it's {x}. Picking it up next week.",
        ),
        ("a Yaris", "a Golf", "a Fiesta", "a Corsa", "a Leaf", "a Clio", "a Mini"),
    ),
    Chain(
        _t("party"),
        "When is {p}'s birthday party?",
        (
            "My birthday party's on {x}, save the date!",
            "Party's moved to {x}, the pub double-booked us.",
            "Sorry, moved again: the party is on {x}, definitely this time.",
        ),
        ("the 14th", "the 21st", "the 7th", "the 28th", "the 3rd", "the 19th"),
    ),
    Chain(
        _t("phone"),
        "Which phone is {p} getting?",
        (
            "Getting {x} when my contract ends.",
            "Actually going with {x}, the reviews of the other one's camera were awful.",
            "Okay, final decision, {x}. Ordered it.",
        ),
        ("a Pixel", "an iPhone", "a Fairphone", "a Galaxy", "a Nokia brick", "a OnePlus"),
    ),
    Chain(
        _t("school", "child"),
        "Which school is {p}'s son going to?",
        (
            "Ollie got a place at {x}, which is a relief.",
            "Turns out Ollie's going to {x} after all, we won the appeal.",
            "Another twist: Ollie's at {x} now, they had a late space closer to home.",
        ),
        ("St Anne's", "Hillside Primary", "Oakfield", "Riverside Academy", "Greenbank", "Moorside"),
    ),
    Chain(
        _t("kitchen", "home"),
        "What colour is {p} painting the kitchen?",
        (
            "The kitchen's going to be {x}, I bought the test pots.",
            "Changed my mind on the kitchen, it's going {x}.",
            "Painter starts tomorrow and the kitchen is {x}, I promise.",
        ),
        ("yellow", "sage green", "terracotta", "navy", "white", "duck-egg blue"),
    ),
    Chain(
        _t("band", "music"),
        "What is {p}'s band called?",
        (
            "The band is called {x}, we finally voted.",
            "We renamed the band {x}, the old name was taken.",
            "New name again, sorry: we're {x} now and it's on the posters.",
        ),
        ("The Damp Squibs", "Velvet Fog", "Night Bus", "Lost Property", "Cardigan Riot", "Static Gulls"),
    ),
    Chain(
        _t("venue", "wedding"),
        "Where is {p} getting married?",
        (
            "We're getting married at {x}, it's perfect.",
            "Venue change, we're doing it at {x} now, the first one doubled its price.",
            "Last change, promise: the wedding is at {x}, deposit paid.",
        ),
        ("the old mill", "a barn in Devon", "the botanical gardens", "the town hall", "a castle in Fife"),
    ),
    Chain(
        _t("study", "learning"),
        "What course is {p} going to study?",
        (
            "I've applied to do {x} at the college in the autumn.",
            "Switched my application to {x}, it suits me better.",
            "Okay, enrolled for real: {x}. No going back.",
        ),
        ("nursing", "law", "architecture", "history", "physiotherapy", "graphic design"),
    ),
    Chain(
        _t("pet", "dogname"),
        "What is {p}'s new puppy called?",
        (
            "The puppy's name is {x}, the kids chose it.",
            "We've ended up calling the puppy {x}, the first name didn't suit him.",
            "He only answers to {x}, so that's his name now.",
        ),
        ("Biscuit", "Waffle", "Bramble", "Pickle", "Rolo", "Moss"),
    ),
)
